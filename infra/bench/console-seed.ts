import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { openApproval } from '../../activities/db/approvals.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { createSql } from '../database/client.js';
import { SEEDED_AUDIT_EVENTS, seedAuditTrail } from './audit-seed.js';
import type { BenchStack } from './stack.js';

/** Held calls waiting in the inbox: as many as the held-calls scenario's full run holds. */
const HELD = 10_000;
/** Agents the held calls come from, in turn: the inbox filtered by one shows 1 in 100. */
const AGENTS = 100;
/** Events of an action seldom called, spread through the trail: 1 in 1,000. */
const RARE_EVENTS = 100;

/** What the console's pages are measured on. */
export interface ConsoleSeed {
  heldApprovals: number;
  agents: number;
  /** The agent the filtered inbox is asked for. */
  filteredAgent: string;
  auditEvents: number;
  /** The action the filtered calls page is asked for, and how many events record it. */
  rareAction: string;
  rareEvents: number;
  /** A real call's event (`acme.list_tasks` through the API): its page asks Temporal too. */
  callEventId: string;
  /** A seeded event: its page reads Postgres only (no approval, no workflow). */
  seededEventId: string;
  /** Seconds each part of the seeding took. */
  seconds: { approvals: number; auditEvents: number };
}

/**
 * The console scenario's world, in the bench environment: 10,000 held `acme.create_task` calls
 * asking `group:approvers`, pending and unexpired, written by `openApproval` itself (the function
 * the call workflow opens an approval with) but with no workflow behind them: the pages only read
 * them. The audit export's 100,000 seeded events, 100 more of `acme.delete_task` mixed in among
 * them, and one real allowed read through the API.
 */
export async function seedConsole(
  stack: BenchStack,
  log: (line: string) => void,
): Promise<ConsoleSeed> {
  const environment = await findEnvironmentByName(stack.sql, 'bench');
  if (!environment) throw new Error('the bench stack has no bench environment');

  log(`console: opening ${String(HELD)} approvals asking group:approvers`);
  let started = performance.now();
  // A few at a time: the pool is shared with the API's and the worker's own connections.
  for (let from = 0; from < HELD; from += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, HELD - from) }, (_, k) => {
        const i = from + k;
        const fingerprint = createHash('sha256')
          .update(`bench-console-${String(i)}`)
          .digest('hex');
        const user = `u_${String(i % 1000)}`;
        return openApproval(stack.sql, {
          environmentId: environment.id,
          fingerprint,
          workflowId: `call/bench/acme.create_task/${fingerprint.slice(0, 32)}`,
          action: 'acme.create_task',
          scope: 'write',
          agentId: `agent-${String(i % AGENTS)}`,
          userExternalId: user,
          requestedFrom: ['group:approvers'],
          request: {
            action: 'acme.create_task',
            user,
            via: 'api',
            input: { title: `task ${String(i)}`, notes: 'é'.repeat(200) },
          },
          policyId: 'default',
          policyVersion: 1,
          policyRule: 'defaults.write',
          ttlSeconds: 24 * 60 * 60,
        });
      }),
    );
  }
  const approvalSeconds = (performance.now() - started) / 1000;

  log(`console: writing ${String(SEEDED_AUDIT_EVENTS)} audit events`);
  started = performance.now();
  await seedAuditTrail(stack, { idSeed: 'console-' });
  await seedAuditTrail(stack, {
    count: RARE_EVENTS,
    idSeed: 'console-rare-',
    action: 'acme.delete_task',
  });
  const auditSeconds = (performance.now() - started) / 1000;
  // What autovacuum would have done by the time people look at a deployment's pages: left to it,
  // it runs during the first series measured (the first run's inbox p50 was twice the second's).
  const maintenance = createSql(stack.config.database.url, { max: 1, statementTimeoutMs: 300_000 });
  try {
    await maintenance`vacuum (analyze) approvals, approval_decisions, audit_events`;
  } finally {
    await maintenance.end();
  }

  // One call the way agents make them, so one event's page shows a workflow looked up in Temporal.
  const run = await fetch(`${stack.config.api.publicUrl}/v1/actions/acme.list_tasks/run`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify({ user: stack.user, input: {} }),
  });
  await run.arrayBuffer();
  if (run.status !== 200) throw new Error(`the console scenario's call answered ${run.status}`);
  const [call]: [{ id: string }?] = await stack.sql`
    select id from audit_events
    where environment_id = ${environment.id} and action = 'acme.list_tasks'
      and workflow_run_id is not null
    order by time desc limit 1`;
  const [seeded]: [{ id: string }?] = await stack.sql`
    select id from audit_events
    where environment_id = ${environment.id} and trace_id = 'console-trace-50000'`;
  if (!call || !seeded) throw new Error('the console scenario found no event to show');

  return {
    heldApprovals: HELD,
    agents: AGENTS,
    filteredAgent: 'agent-7',
    auditEvents: SEEDED_AUDIT_EVENTS + RARE_EVENTS + 1,
    rareAction: 'acme.delete_task',
    rareEvents: RARE_EVENTS,
    callEventId: call.id,
    seededEventId: seeded.id,
    seconds: {
      approvals: Math.round(approvalSeconds * 10) / 10,
      auditEvents: Math.round(auditSeconds * 10) / 10,
    },
  };
}
