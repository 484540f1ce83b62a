import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { checkDatabase } = proxyActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

export interface HealthReport {
  taskQueue: string;
  postgresVersion: string;
}

/** A round trip through the whole back end: Temporal schedules it, a worker runs it, Postgres answers. */
export async function healthCheck(): Promise<HealthReport> {
  const database = await checkDatabase();
  return { taskQueue: workflowInfo().taskQueue, postgresVersion: database.serverVersion };
}
