import { expect } from '@jest/globals';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { NexusOperationFailure } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import type { CallStack } from '../support/call-stack.js';
import { bearer } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import type { CallerStack } from './caller-stack.js';
import { eventually } from '../support/eventually.js';

/** A pending approval as an approver finds it in the inbox. */
export interface PendingApproval {
  id: string;
  status: string;
  agent_id: string;
  request: { input?: { title?: string } };
}

/**
 * What the Nexus tests do and look at from both sides: a backend's workflow that runs
 * `acme.create_task` for `user` through `runAction`, the approver's inbox, and the demo app's
 * own record of the tasks it created.
 */
export function operationFixture(stack: CallStack, seeded: SeededConnection, agent: string) {
  const user = seeded.user.externalId;
  return {
    startCaller(input: Record<string, unknown>, through: CallerStack): Promise<WorkflowHandle> {
      return through.client.workflow.start('runThroughGatehouse', {
        taskQueue: through.taskQueue,
        workflowId: `backend-call-${randomBytes(6).toString('hex')}`,
        args: [through.endpoint, { action: 'acme.create_task', user, input }],
      });
    },

    /**
     * The approval of this title's create_task, waited for as the call is held: pending, or in
     * any state when `anyStatus` (an approval that expires within seconds may have expired
     * before a loaded machine lets the test look).
     */
    async pendingApprovalFor(title: string, anyStatus = false): Promise<PendingApproval> {
      const status = anyStatus ? '' : 'status=pending&';
      return eventually(
        `an approval for "${title}"`,
        async () => {
          const answer = await stack.request(
            stack.approver,
            'GET',
            `/v1/approvals?${status}agent=${agent}`,
          );
          return (answer.body.data as PendingApproval[] | undefined)?.find(
            (approval) => approval.request.input?.title === title,
          );
        },
        200,
      );
    },

    async approvalStatus(id: string): Promise<string> {
      const answer = await stack.request(stack.approver, 'GET', `/v1/approvals/${id}`);
      return String(answer.body.status);
    },

    /** The user's tasks with this title, as the demo app itself has them (not through Gatehouse). */
    async tasksAtTheApp(title: string): Promise<number> {
      const response = await fetch(`${stack.acme.demo.url}/tasks`, {
        headers: bearer(seeded.accessToken),
      });
      const { tasks } = (await response.json()) as { tasks: { title: string }[] };
      return tasks.filter((task) => task.title === title).length;
    },
  };
}

/** The failure a caller's workflow met, down its chain: workflow → Nexus operation → cause. */
export async function failureOf(handle: WorkflowHandle): Promise<unknown> {
  const error = await handle.result().then(
    () => null,
    (failed: unknown) => failed,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const operation = (error as WorkflowFailedError).cause;
  expect(operation).toBeInstanceOf(NexusOperationFailure);
  return (operation as NexusOperationFailure).cause;
}
