import type { McpReadinessInput, McpStartInput } from '../../workflows/mcp-connect-types.js';
import { beginMcpAuthorization } from './begin-authorization.js';
import type { McpAuthDeps } from './deps.js';
import { mcpConnectReadiness } from './readiness.js';

/** The activities of an MCP app's connect flow; its exchange and refresh share the catalog's. */
export function mcpAuthActivities(deps: McpAuthDeps) {
  return {
    beginMcpAuthorization: (input: McpStartInput) => beginMcpAuthorization(deps, input),
    checkMcpAuthorization: (input: McpReadinessInput) => mcpConnectReadiness(deps, input),
  };
}
