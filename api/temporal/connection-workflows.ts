import { v7 as uuidv7 } from 'uuid';
import {
  WorkflowIdConflictPolicy,
  type Client,
  type Workflow,
  type WorkflowHandle,
  type WorkflowResultType,
} from '@temporalio/client';
import { refreshThroughWorkflow } from '../../activities/connections/refresh-workflow.js';
import type { Connection } from '../../activities/db/connections.js';
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '../../infra/config.js';
import type { ConnectOutcome } from '../../workflows/connection-types.js';
import type { RefreshResult } from '../../workflows/connection-types.js';
import type {
  McpReadiness,
  McpReadinessInput,
  McpStartInput,
  McpStartOutcome,
} from '../../workflows/mcp-connect-types.js';
import type {
  checkMcpConnection,
  completeConnection,
  deleteConnectedUser,
  revokeConnection,
  startMcpConnection,
} from '../../workflows/index.js';

/**
 * How the API hands connection work to Temporal; workflow ids read well in the UI. Every wait is
 * bounded: Temporal has REQUEST_DEADLINE_MS to start the workflow, and the workflow as long as a
 * call to the app may take to finish; past either bound the RPC's own gRPC deadline ends the wait
 * and the request is answered 503 (api/errors.ts). The workflows go on: asking again joins the same
 * one (conflict policy use-existing), except a connect callback's.
 */
export class ConnectionWorkflows {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
  ) {}

  private async started<W extends Workflow>(
    start: () => Promise<WorkflowHandle<W>>,
  ): Promise<WorkflowResultType<W>> {
    const startBy = Date.now() + this.limits.deadlineMs;
    const handle = await this.client.withDeadline(startBy, start);
    return this.client.withDeadline(startBy + this.limits.callAnswerMs, () => handle.result());
  }

  completeConnection(attemptId: string): Promise<ConnectOutcome> {
    return this.started(() =>
      this.client.workflow.start<typeof completeConnection>('completeConnection', {
        taskQueue: this.taskQueue,
        workflowId: `connect/${attemptId}`,
        args: [attemptId],
      }),
    );
  }

  /** The start of a connect to a remote MCP app: its authorize URL, or why not. */
  startMcpConnection(input: McpStartInput): Promise<McpStartOutcome> {
    return this.started(() =>
      this.client.workflow.start<typeof startMcpConnection>('startMcpConnection', {
        taskQueue: this.taskQueue,
        workflowId: `connect-start/${input.attemptId}`,
        args: [input],
      }),
    );
  }

  /** Whether a connect link for a remote MCP app can work; each ask is its own check. */
  checkMcpConnection(input: McpReadinessInput): Promise<McpReadiness> {
    return this.started(() =>
      this.client.workflow.start<typeof checkMcpConnection>('checkMcpConnection', {
        taskQueue: this.taskQueue,
        workflowId: `connect-check/${input.environmentId}/${input.appId}/${uuidv7()}`,
        args: [input],
      }),
    );
  }

  /** Forced refresh: guaranteed to reflect a token request made after `connection` was read. */
  refresh(connection: Connection, force: boolean): Promise<RefreshResult> {
    const until = Date.now() + this.limits.deadlineMs + this.limits.callAnswerMs;
    return this.client.withDeadline(until, () =>
      refreshThroughWorkflow(this.client, this.taskQueue, {
        connectionId: connection.id,
        seenRefreshCount: connection.refreshCount,
        force,
      }),
    );
  }

  revoke(connectionId: string): Promise<{ id: string; status: string }> {
    return this.started(() =>
      this.client.workflow.start<typeof revokeConnection>('revokeConnection', {
        taskQueue: this.taskQueue,
        workflowId: `revoke/${connectionId}`,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        args: [connectionId],
      }),
    );
  }

  deleteUser(userId: string, connectionIds: string[]): Promise<void> {
    return this.started(() =>
      this.client.workflow.start<typeof deleteConnectedUser>('deleteConnectedUser', {
        taskQueue: this.taskQueue,
        workflowId: `delete-user/${userId}`,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        args: [{ userId, connectionIds }],
      }),
    );
  }
}

/** The API's ConnectionWorkflows, bounded by the configured request deadline. */
export function connectionWorkflowsFor(deps: {
  temporal: Client;
  config: { temporal: { taskQueue: string }; requests: RequestLimits };
}): ConnectionWorkflows {
  return new ConnectionWorkflows(
    deps.temporal,
    deps.config.temporal.taskQueue,
    deps.config.requests,
  );
}
