import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type {
  McpReadiness,
  McpReadinessInput,
  McpStartInput,
  McpStartOutcome,
} from './mcp-connect-types.js';

// A start may register Gatehouse with the authorization server; tried again, it could register
// twice. Either step is the answer to a person or a caller waiting, who can simply ask again.
const { beginMcpAuthorization, checkMcpAuthorization } = proxyActivities<Activities>({
  startToCloseTimeout: '60 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * The start of a hosted connect flow for a remote MCP app: discovery, the choice of
 * client, a registration if one is needed, and the authorize URL, as `connect-start/<attempt id>`.
 * Every request to the app's servers runs in the activity; the input names the browser's cookie
 * by its hash only.
 */
export async function startMcpConnection(input: McpStartInput): Promise<McpStartOutcome> {
  return beginMcpAuthorization(input);
}

/** Whether a connect link for an MCP app can work, asked when the link is created. */
export async function checkMcpConnection(input: McpReadinessInput): Promise<McpReadiness> {
  return checkMcpAuthorization(input);
}
