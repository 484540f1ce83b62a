import { beforeAll, describe, expect, it } from '@jest/globals';
import { ScheduleOverlapPolicy, WorkflowFailedError, type Client } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { insertSyntheticAuditEvents } from '../../infra/bench/synthetic-audit-events.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { Config } from '../../infra/config.js';
import { connectClient } from '../../infra/temporal/connection.js';
import { auditSealScheduleId } from '../../worker/audit-seal-schedule.js';
import type { sealAuditEvents } from '../../workflows/seal-audit.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { newAuditEvent } from '../support/audit-event.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { stopsAfterAll } from '../support/stops.js';

// Long enough that the schedule does not fire on its own while the test runs: the test triggers it.
const INTERVAL_SECONDS = 3600;
const OLD_EVENTS = 20;

let db: TestDatabase;
let config: Config;
let worker: ServiceProcess;
let temporal: Client;

const started = stopsAfterAll(120_000);

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  // The schedule outlives the worker in the shared Temporal: deleted (whatever happens to the
  // set-up once the worker may have made it), or it fires every hour.
  started.push(async () => {
    const client = await connectClient(config.temporal, config.encryption);
    try {
      await client.schedule
        .getHandle(auditSealScheduleId(config.temporal.taskQueue))
        .delete()
        .catch(() => undefined);
    } finally {
      await client.connection.close();
    }
  });
  // `gatehouse worker` as in production: its start-up is what creates the schedule.
  worker = await startServiceProcess('worker', config, {
    env: {
      AUDIT_SIGNING_KEY: Buffer.alloc(32, 5).toString('base64'),
      AUDIT_SIGNING_KEY_ID: 'sched1',
      AUDIT_SEAL_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      AUDIT_SEAL_SETTLE_SECONDS: '60',
    },
  });
  started.add(worker);
  temporal = await connectClient(config.temporal, config.encryption);
  started.push(() => temporal.connection.close());
}, 360_000);

/** An allowed read, as the seal sees any event. */
const event = (environmentId: string, n: number) =>
  newAuditEvent(environmentId, n, {
    action: 'acme.list_tasks',
    scope: 'read',
    request: { action: 'acme.list_tasks', input: {} },
  });

describe('the audit seal schedule', () => {
  it('exists after worker start-up, every AUDIT_SEAL_INTERVAL_SECONDS, starting sealAuditEvents', async () => {
    const description = await temporal.schedule
      .getHandle(auditSealScheduleId(config.temporal.taskQueue))
      .describe();
    expect(description.scheduleId).toBe(`audit-seal/${config.temporal.taskQueue}`);
    expect(description.spec.intervals).toEqual([
      expect.objectContaining({ every: INTERVAL_SECONDS * 1000 }),
    ]);
    expect(description.action).toEqual(
      expect.objectContaining({
        type: 'startWorkflow',
        workflowType: 'sealAuditEvents',
        taskQueue: config.temporal.taskQueue,
      }),
    );
    expect(description.policies.overlap).toBe(ScheduleOverlapPolicy.SKIP);
    expect(description.state.paused).toBe(false);
  });

  it('when triggered, seals the events older than the settle delay into a checkpoint that verifies', async () => {
    const { id: environmentId } = await ensureEnvironment(db.sql, 'sealed-by-schedule');
    // Written an hour ago, as far as the settle delay (60 s) is concerned; hashed by the insert
    // trigger as the service's rows are.
    const old = await db.sql<{ id: string }[]>`
      insert into audit_events (id, environment_id, time, action, scope, decision, agent_id, via,
        user_external_id, request, response, trace_id)
      select gen_random_uuid(), ${environmentId}, now() - interval '1 hour' + n * interval '1 ms',
        'acme.list_tasks', 'read', 'allowed', 'agent', 'api', 'u_' || n,
        '{"action":"acme.list_tasks","input":{}}', '{"ok":true}', 'trace-' || n
      from generate_series(1, ${OLD_EVENTS}::int) as n
      returning id`;
    const ids = old.map((row) => row.id);
    const [fresh] = await insertAuditEvents(db.sql, [event(environmentId, OLD_EVENTS)]);

    const handle = temporal.schedule.getHandle(auditSealScheduleId(config.temporal.taskQueue));
    await handle.trigger();
    const deadline = Date.now() + 60_000;
    let checkpoints: { eventIds: string[]; keyId: string }[] = [];
    while (checkpoints.length === 0 && Date.now() < deadline) {
      await sleep(250);
      checkpoints = await db.sql<{ eventIds: string[]; keyId: string }[]>`
        select event_ids::text[] as event_ids, key_id from audit_checkpoints
        where environment_id = ${environmentId}`;
    }
    expect([...checkpoints]).toEqual([{ eventIds: ids, keyId: 'sched1' }]);
    expect(checkpoints[0]?.eventIds).not.toContain(fresh);

    // The run was the schedule's: its recent action names the workflow, whose result is the seal.
    const recent = (await handle.describe()).info.recentActions;
    expect(recent.length).toBeGreaterThanOrEqual(1);
    const started = recent.at(-1)?.action.workflow;
    const result = await temporal.workflow
      .getHandle<typeof sealAuditEvents>(started?.workflowId ?? '', started?.firstExecutionRunId)
      .result();
    expect(result.checkpoints).toEqual([
      expect.objectContaining({ environmentId, eventCount: OLD_EVENTS }),
    ]);

    const verified = await runCli(['audit', 'verify', '--env', 'sealed-by-schedule'], {
      DATABASE_URL: db.url,
    });
    expect(verified).toMatchObject({ code: 0, stderr: '' });
    // Every event's hash is checked, the fresh one's too (still unsealed).
    expect(verified.stdout).toContain(
      `audit trail intact: 1 checkpoints, ${String(OLD_EVENTS + 1)} events`,
    );
  }, 120_000);

  it("when one environment's seal fails, still seals the others, and the run fails naming it", async () => {
    const { id: failing } = await ensureEnvironment(db.sql, 'seal-refused');
    const { id: healthy } = await ensureEnvironment(db.sql, 'seal-unaffected');
    // An hour old: past the settle delay.
    await insertSyntheticAuditEvents(db.sql, failing, { count: 3, idSeed: 'refused' });
    await insertSyntheticAuditEvents(db.sql, healthy, { count: 4, idSeed: 'unaffected' });
    // A real database failure for that environment alone, on every attempt.
    await db.sql.unsafe(`
      create function refuse_checkpoint() returns trigger language plpgsql as $$
      begin raise exception 'checkpoint refused for this test'; end; $$;
      create trigger refuse_checkpoint before insert on audit_checkpoints for each row
        when (new.environment_id = '${failing}') execute function refuse_checkpoint();`);
    try {
      const handle = temporal.schedule.getHandle(auditSealScheduleId(config.temporal.taskQueue));
      const before = (await handle.describe()).info.recentActions.length;
      await handle.trigger();
      let started: { workflowId: string; firstExecutionRunId: string } | undefined;
      const deadline = Date.now() + 60_000;
      while (!started && Date.now() < deadline) {
        await sleep(250);
        const recent = (await handle.describe()).info.recentActions;
        if (recent.length > before) started = recent.at(-1)?.action.workflow;
      }
      const outcome = await temporal.workflow
        .getHandle<typeof sealAuditEvents>(started?.workflowId ?? '', started?.firstExecutionRunId)
        .result()
        .then(
          () => null,
          (error: unknown) => error,
        );
      // The run shows the failure (after the activity's retries), naming the environment...
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      const activity = (outcome as WorkflowFailedError).cause;
      expect(activity).toBeInstanceOf(ActivityFailure);
      const cause = (activity as ActivityFailure).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('AuditSealFailed');
      expect((cause as ApplicationFailure).message).toContain(
        `${failing}: checkpoint refused for this test`,
      );
      // ...and the environment after it was sealed all the same.
      const sealed = await db.sql<{ environmentId: string; eventCount: number }[]>`
        select environment_id, event_count from audit_checkpoints
        where environment_id in (${failing}, ${healthy})`;
      expect([...sealed]).toEqual([{ environmentId: healthy, eventCount: 4 }]);
    } finally {
      await db.sql`drop trigger refuse_checkpoint on audit_checkpoints`;
    }
  }, 180_000);
});
