import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
} from '@temporalio/client';
import type { Config } from '../infra/config.js';
import type { Logger } from '../infra/logger.js';

/** One schedule per task queue, so two deployments sharing a namespace keep their own. */
export const auditSealScheduleId = (taskQueue: string) => `audit-seal/${taskQueue}`;

/**
 * Creates the Temporal Schedule that seals audit events every AUDIT_SEAL_INTERVAL_SECONDS, or
 * brings an existing one to this configuration: every worker runs this at start-up, so the last
 * one started wins and a changed interval applies on the next deploy. Overlaps are skipped (a seal
 * still running covers what the next would) and a missed run is not caught up one by one: the
 * next run seals everything due.
 */
export async function ensureAuditSealSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = auditSealScheduleId(config.temporal.taskQueue);
  const options: ScheduleOptions = {
    scheduleId,
    spec: { intervals: [{ every: `${String(config.audit.sealIntervalSeconds)}s` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'sealAuditEvents',
      taskQueue: config.temporal.taskQueue,
      workflowExecutionTimeout: '10 minutes',
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(scheduleId).update((previous) => ({
      ...previous,
      spec: options.spec,
      action: options.action,
      policies: { ...previous.policies, ...options.policies },
    }));
  }
  return scheduleId;
}

/**
 * At worker start-up: the schedule when a signing key is configured; otherwise a warning, since
 * events then go unsealed (README "Audit integrity").
 */
export async function startAuditSealing(
  client: Client,
  config: Config,
  logger: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  if (config.audit.signingKey === null) {
    logger.warn('AUDIT_SIGNING_KEY is not set: audit events are hashed but never sealed');
    return;
  }
  const scheduleId = await ensureAuditSealSchedule(client, config);
  logger.info(
    { scheduleId, everySeconds: config.audit.sealIntervalSeconds },
    'audit seal schedule in place',
  );
}
