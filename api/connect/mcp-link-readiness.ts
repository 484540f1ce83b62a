import type { ApiDeps } from '../deps.js';
import { connectionWorkflowsFor } from '../temporal/connection-workflows.js';
import { mcpNotReadyError } from './mcp-not-ready.js';

/**
 * Checked when a connect link to a remote MCP app is created, as an auth config is for a catalog
 * app: the caller learns at once, not the end user on a broken page. Discovery reaches the app's
 * servers, so it runs in a workflow.
 */
export async function assertMcpAppConnectable(
  deps: ApiDeps,
  environmentId: string,
  appId: string,
): Promise<void> {
  const readiness = await connectionWorkflowsFor(deps).checkMcpConnection({ environmentId, appId });
  if (!readiness.ready) throw mcpNotReadyError(appId, readiness);
}
