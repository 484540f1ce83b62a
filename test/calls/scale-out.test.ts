import { beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../infra/config.js';
import { answerOf, type Answer } from '../support/call-stack.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import {
  startAcmeFixture,
  type AcmeFixture,
  type SeededConnection,
} from '../support/seed-connection.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * README "Production processes and configuration": the API and the worker are stateless, so any
 * number of each run against one Temporal and one Postgres, and any of them may be replaced.
 * Here they are the real `gatehouse api` and `gatehouse worker` processes: a call held through
 * one API process, whose API process and one of the two workers are then stopped and replaced
 * by new ones, is decided through another API process and runs exactly once when retried
 * through the new one; reads keep being served while the processes are replaced.
 */

const USER = 'u_scale';

let db: TestDatabase;
let acme: AcmeFixture;
let config: Config;
let seeded: SeededConnection;
/** The calling agent: a standard key, as an agent's key should be. */
let agent: TestKey;
/** Another agent's full key: decides the calls held for `agent` (four eyes). */
let approver: TestKey;
const processes: ServiceProcess[] = [];
let apiA: ServiceProcess;
let apiB: ServiceProcess;
let worker1: ServiceProcess;

const started = stopsAfterAll(120_000);

async function start(kind: 'api' | 'worker', publicUrl?: string): Promise<ServiceProcess> {
  const service = await startServiceProcess(kind, config, publicUrl ? { publicUrl } : {});
  processes.push(service);
  return service;
}

async function request(
  api: ServiceProcess,
  key: TestKey,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...bearer(key.key),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answerOf(response);
}

function run(api: ServiceProcess, action: string, body: Record<string, unknown>): Promise<Answer> {
  return request(api, agent, 'POST', `/v1/actions/${action}/run`, body);
}

function heldApproval(answer: Answer): string {
  expect(answer.status).toBe(403);
  const error = answer.body.error as { code: string; approval?: { id: string; status: string } };
  expect(error.code).toBe('approval_required');
  expect(error.approval?.status).toBe('pending');
  return error.approval?.id ?? '';
}

/** The user's tasks with this title, as the demo app itself has them (not through Gatehouse). */
async function tasksAtTheApp(title: string): Promise<number> {
  const response = await fetch(`${acme.demo.url}/tasks`, { headers: bearer(seeded.accessToken) });
  expect(response.status).toBe(200);
  const { tasks } = (await response.json()) as { tasks: { title: string }[] };
  return tasks.filter((task) => task.title === title).length;
}

interface AuditItem {
  id: string;
  action: string;
  decision: string;
  agent_id: string;
}

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  acme = started.add(await startAcmeFixture(db.sql, db.url));
  // Every process this file started, whichever test started it (one replaces a worker).
  started.push(() => Promise.all(processes.map((service) => service.stop(15_000))));
  config = acme.config;
  agent = await createTestKey(db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'scale-agent',
  });
  approver = await createTestKey(db.sql, {
    env: 'test',
    access: 'full',
    agentId: 'scale-approver',
  });
  seeded = await acme.connect({ environmentId: agent.environmentId, externalId: USER });

  // Two workers on the test's task queue and two API processes, as behind a load balancer that
  // answers for API B's address; the workers bundle the workflows on start, so they go first.
  [worker1] = await Promise.all([start('worker'), start('worker')]);
  apiB = await start('api');
  apiA = await start('api', apiB.url);
}, 600_000);

describe('API and worker processes are stateless', () => {
  it('a call held through one API process runs exactly once after approval, though that process and a worker were replaced', async () => {
    const input = { title: `held across a replacement ${String(Date.now())}` };
    const call = { user: USER, input };

    // 2. Held through API A: the default policy asks for writes; the app is not called.
    const approvalId = heldApproval(await run(apiA, 'acme.create_task', call));
    // The same call through API B meets the same approval: it lives in Temporal and Postgres.
    expect(heldApproval(await run(apiB, 'acme.create_task', call))).toBe(approvalId);
    expect(await tasksAtTheApp(input.title)).toBe(0);

    // Reads through API B all through the replacement, one after another.
    const replacement = { done: false };
    const readStatuses: number[] = [];
    const reads = (async () => {
      while (!replacement.done) {
        readStatuses.push((await run(apiB, 'acme.list_tasks', { user: USER, input: {} })).status);
        await sleep(100);
      }
    })();

    // 3. API A and worker 1 are stopped the way a process manager stops them, and end cleanly.
    const [apiExit, workerExit] = await Promise.all([apiA.stop(), worker1.stop()]);
    expect(apiExit).toEqual({ code: 0, signal: null });
    expect(workerExit).toEqual({ code: 0, signal: null });
    await expect(fetch(`${apiA.url}/healthz`)).rejects.toThrow();

    // While they are down, API B and worker 2 serve on: a read, the proxy and the pending
    // approval all answer.
    const whileDown = await run(apiB, 'acme.list_tasks', { user: USER, input: {} });
    expect(whileDown.status).toBe(200);
    expect(whileDown.body).toMatchObject({ ok: true, data: { tasks: [] } });
    const proxied = await fetch(`${apiB.url}/v1/proxy/acme/tasks`, {
      headers: { ...bearer(agent.key), 'service-user': USER },
    });
    expect(proxied.status).toBe(200);
    const pending = await request(apiB, agent, 'GET', `/v1/approvals/${approvalId}`);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ id: approvalId, status: 'pending' });

    // New processes: worker 3 and API C, on a port of its own.
    await start('worker');
    const apiC = await start('api', apiB.url);
    expect(apiC.url).not.toBe(apiA.url);

    replacement.done = true;
    await reads;
    expect(readStatuses.length).toBeGreaterThan(0);
    expect(readStatuses.filter((status) => status !== 200)).toEqual([]);

    // 4. Four eyes: the calling agent cannot decide its own call; another agent's full key
    // decides it, through API B.
    const own = await request(apiC, agent, 'POST', `/v1/approvals/${approvalId}/approve`);
    expect(own.status).toBe(403);
    expect(own.body.error).toMatchObject({ code: 'insufficient_access' });
    const approved = await request(apiB, approver, 'POST', `/v1/approvals/${approvalId}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({
      id: approvalId,
      status: 'approved',
      decided_by: 'scale-approver',
    });
    expect(await tasksAtTheApp(input.title)).toBe(0);

    // 5. The identical call through API C runs, in the workflow that held it: one request to
    // the app, one task.
    const before = acme.demo.stats().apiRequests;
    const ran = await run(apiC, 'acme.create_task', call);
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect(acme.demo.stats().apiRequests - before).toBe(1);
    expect(await tasksAtTheApp(input.title)).toBe(1);

    // The approval is spent: the same call again is evaluated afresh and held under a new
    // approval (write asks); the app is not called and no second task appears.
    const afterRun = acme.demo.stats().apiRequests;
    const again = heldApproval(await run(apiB, 'acme.create_task', call));
    expect(again).not.toBe(approvalId);
    expect(acme.demo.stats().apiRequests).toBe(afterRun);
    expect(await tasksAtTheApp(input.title)).toBe(1);
    const spent = await request(apiC, agent, 'GET', `/v1/approvals/${approvalId}`);
    expect(spent.body).toMatchObject({ status: 'approved', decided_by: 'scale-approver' });

    // 6. The audit, read through API C: for this approval, the two holds (through A and B) and
    // the one run; the fresh evaluation is held under the new approval; nothing else wrote.
    const listed = await request(apiC, agent, 'GET', `/v1/audit?user=${USER}&limit=100`);
    expect(listed.status).toBe(200);
    const writes = (listed.body.data as AuditItem[]).filter(
      (event) => event.action === 'acme.create_task',
    );
    const byApproval = new Map<string, string[]>();
    for (const event of writes) {
      expect(event.agent_id).toBe('scale-agent');
      const full = await request(apiC, agent, 'GET', `/v1/audit/${event.id}`);
      const approval = (full.body.approval as { id: string } | undefined)?.id ?? 'none';
      byApproval.set(approval, [...(byApproval.get(approval) ?? []), event.decision]);
    }
    // Newest first.
    expect(Object.fromEntries(byApproval)).toEqual({
      [again]: ['blocked'],
      [approvalId]: ['allowed', 'blocked', 'blocked'],
    });
  }, 600_000);
});
