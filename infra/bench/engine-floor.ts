import { randomUUID } from 'node:crypto';
import {
  WithStartWorkflowOperation,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowUpdateStage,
  type Client,
} from '@temporalio/client';
import { ENGINE_FLOOR_WORKFLOW, floorUpdate } from '../../workflows/engine-floor.js';

/**
 * One engine-floor call, sent the way the API sends a governed call (api/temporal/
 * call-workflows.ts): update-with-start on a fresh workflow id, conflict policy use-existing,
 * wait until the Update is accepted, then for its result. The client is the API's (same
 * connection settings and payload codec), the worker the service's own worker processes.
 */
export function floorCall(client: Client, taskQueue: string) {
  // About the size of a call's ticket, so the codec does comparable work.
  const payload = 'x'.repeat(200);
  return async (): Promise<boolean> => {
    const id = randomUUID();
    const handle = await client.workflow.startUpdateWithStart(floorUpdate, {
      args: [payload],
      updateId: id,
      waitForStage: WorkflowUpdateStage.ACCEPTED,
      startWorkflowOperation: new WithStartWorkflowOperation(ENGINE_FLOOR_WORKFLOW, {
        taskQueue,
        workflowId: `floor/${id}`,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: [],
      }),
    });
    return (await handle.result()) === payload;
  };
}
