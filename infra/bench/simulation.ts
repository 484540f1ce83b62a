import { v7 as uuidv7 } from 'uuid';
import { auditRequest } from '../../activities/calls/call-records.js';
import { insertAuditEvents, type NewAuditEvent } from '../../activities/db/audit-events.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import type { CallRequest, CallTargetInput } from '../../workflows/call-types.js';
import { measure, type Measurement } from './measure.js';
import type { BenchStack } from './stack.js';

/** Calls recorded for the simulation, its most; the goal is 10,000 calls in seconds. */
const CALLS = 10_000;

/**
 * One recorded call of a realistic mix: action writes with titles of every length, reads and
 * writes and deletes through the proxy, deletes, and a remote MCP tool through MCP.
 */
function target(i: number): CallTargetInput {
  switch (i % 10) {
    case 0:
    case 1:
      return {
        kind: 'proxy',
        app: 'acme',
        scope: i % 20 === 0 ? 'read' : 'write',
        method: i % 20 === 0 ? 'GET' : 'POST',
        path: 'tasks',
        query: `page=${String(i % 7)}`,
        headers: {},
        bodyBase64: null,
      };
    case 2:
      return {
        kind: 'proxy',
        app: 'acme',
        scope: 'destructive',
        method: 'DELETE',
        path: `tasks/t_${String(i)}`,
        query: '',
        headers: {},
        bodyBase64: null,
      };
    case 3:
      return {
        kind: 'action',
        action: 'acme.delete_task',
        app: 'acme',
        scope: 'destructive',
        input: { id: `t_${String(i)}` },
      };
    case 4:
      return {
        kind: 'action',
        action: 'everything.echo',
        app: 'everything',
        scope: 'read',
        input: { message: i % 3 === 0 ? 'rm -rf /' : `hello ${String(i)}` },
      };
    default:
      return {
        kind: 'action',
        action: 'acme.create_task',
        app: 'acme',
        scope: 'write',
        input: { title: 'x'.repeat(5 + (i % 40)), notes: `call ${String(i)}` },
      };
  }
}

/** Writes the recorded calls straight into the audit log, as the call workflow writes them. */
async function seed(stack: BenchStack): Promise<void> {
  const environment = await findEnvironmentByName(stack.sql, 'bench');
  if (!environment) throw new Error('no bench environment');
  for (let start = 0; start < CALLS; start += 1000) {
    const events: NewAuditEvent[] = [];
    for (let i = start; i < start + 1000; i++) {
      const call: CallRequest = {
        environmentId: environment.id,
        environmentName: environment.name,
        agentId: 'bench-agent',
        userExternalId: stack.user,
        via: i % 10 === 4 ? 'mcp' : 'api',
        fingerprint: String(i),
        target: target(i),
        retryWindowSeconds: 3600,
      };
      const { target: t } = call;
      events.push({
        id: uuidv7(),
        environmentId: environment.id,
        action: t.kind === 'action' ? t.action : `${t.app}.proxy`,
        scope: t.scope,
        decision: 'allowed',
        reason: 'policy default v2: bench',
        agentId: call.agentId,
        via: call.via,
        userExternalId: call.userExternalId,
        connectedUserId: null,
        connectionId: null,
        approvalId: null,
        request: auditRequest(call),
        response: null,
        traceId: `bench-${String(i)}`,
        policyId: 'default',
        policyVersion: 2,
      });
    }
    await insertAuditEvents(stack.sql, events);
  }
}

/** Stricter than the bench's own policy: conditions on input, the path, and a proxy header. */
const candidate = {
  defaults: { read: 'allow', write: 'allow', destructive: 'ask' },
  rules: [
    { action: 'acme.create_task', when: 'size(input.title) > 30', decision: 'ask' },
    { action: 'acme.delete_task', decision: 'deny' },
    {
      action: 'acme.proxy',
      scope: 'write',
      when: "request.path.startsWith('/tasks')",
      decision: 'ask',
    },
    {
      action: 'acme.proxy',
      scope: 'read',
      when: "request.headers['x-env'] == 'prod'",
      decision: 'deny',
    },
    { action: 'everything.echo', when: "input.message.startsWith('rm')", decision: 'deny' },
    { app: 'acme', scope: 'write', when: "now.getHours('UTC') < 6", decision: 'ask' },
  ],
};

export interface SimulationResult extends Measurement {
  calls: number;
  /** Calls judged per second, at the median request. */
  callsPerSecond: number;
  /** What the service itself counted for one answer. */
  tookMs: number;
  changes: number;
  cannotJudge: number;
}

/**
 * `POST /v1/policies/default/simulate?last=10000` over 10,000 recorded calls, timed
 * whole (HTTP, reading the rows, judging each by both versions, the answer), one at a time.
 */
export async function simulationScenario(
  stack: BenchStack,
  runs: number,
  log: (line: string) => void,
): Promise<SimulationResult> {
  log(`simulation: recording ${String(CALLS)} calls`);
  await seed(stack);
  let last: Record<string, unknown> = {};
  const request = async () => {
    const response = await fetch(
      `${stack.apiUrls[0] ?? ''}/v1/policies/default/simulate?last=${String(CALLS)}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack.approverKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(candidate),
      },
    );
    last = (await response.json()) as Record<string, unknown>;
    return response.status === 200 && last.calls === CALLS;
  };
  log(`simulation: ${String(runs)} simulations of ${String(CALLS)} calls`);
  await request();
  const measured = await measure(request, { concurrency: 1, count: runs });
  const changes = (last.changes as { count: number }[] | undefined) ?? [];
  return {
    ...measured,
    calls: CALLS,
    callsPerSecond: measured.p50 === 0 ? 0 : Math.round((CALLS / measured.p50) * 1000),
    tookMs: Number(last.took_ms ?? 0),
    changes: changes.reduce((sum, change) => sum + change.count, 0),
    cannotJudge: (last.cannot_judge as { count?: number } | undefined)?.count ?? 0,
  };
}
