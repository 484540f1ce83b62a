import { WorkflowIdConflictPolicy, type Client } from '@temporalio/client';
import {
  refreshTaskQueue,
  type RefreshRequest,
  type RefreshResult,
} from '../../workflows/connection-types.js';

/**
 * Asks for a refresh through `refresh/<connection id>`: joins the running one if there is one
 * (conflict policy use-existing), starts one otherwise, and waits for its result. Shared by the
 * API (`POST …/refresh`) and by activities that need a fresh token.
 */
export async function refreshThroughWorkflow(
  client: Client,
  taskQueue: string,
  request: RefreshRequest,
): Promise<RefreshResult> {
  const handle = await client.workflow.start('refreshConnection', {
    taskQueue: refreshTaskQueue(taskQueue),
    workflowId: `refresh/${request.connectionId}`,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    args: [request],
  });
  return (await handle.result()) as RefreshResult;
}
