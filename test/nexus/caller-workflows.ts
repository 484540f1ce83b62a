/**
 * A backend's own workflows, as README "Call Gatehouse from your Temporal workflows (Nexus)"
 * shows them: bundled for a worker in the backend's namespace, they call Gatehouse's `runAction`
 * through a Nexus endpoint. The API key is added to the operation's headers by
 * ./caller-interceptors.ts, never passed as an argument.
 */
import { createNexusServiceClient } from '@temporalio/workflow';
import {
  gatehouseService,
  type RunActionInput,
  type RunActionResult,
} from '../../workflows/nexus/gatehouse-service.js';

/** Runs one action through Gatehouse and returns the app's answer, after approval if held. */
export async function runThroughGatehouse(
  endpoint: string,
  request: RunActionInput,
): Promise<RunActionResult> {
  const gatehouse = createNexusServiceClient({ service: gatehouseService, endpoint });
  return gatehouse.executeOperation('runAction', request, { scheduleToCloseTimeout: '1 day' });
}
