import { WorkflowIdConflictPolicy, type Client } from '@temporalio/client';
import { refreshThroughWorkflow } from '../../activities/connections/refresh-workflow.js';
import type { Connection } from '../../activities/db/connections.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import type { RefreshResult } from '../../workflows/connection-types.js';
import type {
  completeConnection,
  deleteConnectedUser,
  revokeConnection,
} from '../../workflows/index.js';

/** How the API hands connection work to Temporal; workflow ids read well in the UI. */
export class ConnectionWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  completeConnection(attemptId: string): Promise<ConnectOutcome> {
    return this.client.workflow.execute<typeof completeConnection>('completeConnection', {
      taskQueue: this.taskQueue,
      workflowId: `connect/${attemptId}`,
      args: [attemptId],
    });
  }

  /** Forced refresh: guaranteed to reflect a token request made after `connection` was read. */
  refresh(connection: Connection, force: boolean): Promise<RefreshResult> {
    return refreshThroughWorkflow(this.client, this.taskQueue, {
      connectionId: connection.id,
      seenRefreshCount: connection.refreshCount,
      force,
    });
  }

  revoke(connectionId: string): Promise<{ id: string; status: string }> {
    return this.client.workflow.execute<typeof revokeConnection>('revokeConnection', {
      taskQueue: this.taskQueue,
      workflowId: `revoke/${connectionId}`,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      args: [connectionId],
    });
  }

  deleteUser(userId: string, connectionIds: string[]): Promise<void> {
    return this.client.workflow.execute<typeof deleteConnectedUser>('deleteConnectedUser', {
      taskQueue: this.taskQueue,
      workflowId: `delete-user/${userId}`,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      args: [{ userId, connectionIds }],
    });
  }
}
