import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { startRestartableTemporal } from '../support/temporal-server.js';
import { startWorkerProcess } from '../support/worker-process.js';

/**
 * A held call is durable. Its workflow waits in Temporal, not in any process, so
 * the worker and the Temporal server itself may restart between the hold and the decision.
 */
const stops: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

function approvalId(answer: Answer): string {
  const error = answer.body.error as { code: string; approval?: { id: string } };
  expect(error.code).toBe('approval_required');
  return error.approval?.id ?? '';
}

async function titles(stack: CallStack, user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

describe('a held call', () => {
  it('survives its worker: stopped before the decision, a new worker runs it once', async () => {
    const stack = await startCallStack();
    stops.push(() => stack.stop());
    await stack.connect('u_restart');
    const input = { title: 'across a worker restart' };
    const id = approvalId(await stack.run('acme.create_task', { user: 'u_restart', input }));

    await stack.worker.stop();
    // The decision is asked while no worker runs: it waits in Temporal until one is back.
    const deciding = stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stack.restartWorker();
    expect((await deciding).body).toMatchObject({ id, status: 'approved' });

    const before = stack.acme.demo.stats().apiRequests;
    const ran = await stack.run('acme.create_task', { user: 'u_restart', input });
    expect(ran.status).toBe(200);
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles(stack, 'u_restart')).filter((t) => t === input.title)).toHaveLength(1);
  });

  it('survives a restart of the Temporal server with its persistent database', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-durable-'));
    stops.push(() => rm(dir, { recursive: true, force: true }));
    const server = await startRestartableTemporal({ dbFile: path.join(dir, 'temporal.sqlite') });
    stops.push(() => server.close());

    const stack = await startCallStack({ env: { TEMPORAL_ADDRESS: server.address } });
    stops.push(() => stack.stop());
    await stack.connect('u_server');
    const input = { title: 'across a server restart' };
    const id = approvalId(await stack.run('acme.create_task', { user: 'u_server', input }));

    await stack.worker.stop();
    await server.stop();
    await server.start();
    await stack.restartWorker();

    const approved = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
    expect(approved.body).toMatchObject({ id, status: 'approved' });
    const before = stack.acme.demo.stats().apiRequests;
    const ran = await stack.run('acme.create_task', { user: 'u_server', input });
    expect(ran.status).toBe(200);
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect(ran.body).toMatchObject({ ok: true, data: { title: input.title } });
    expect((await titles(stack, 'u_server')).filter((t) => t === input.title)).toHaveLength(1);
  });
});

describe('a write in flight', () => {
  it('is never sent again when its worker dies mid-request', async () => {
    const stack = await startCallStack();
    stops.push(() => stack.stop());
    await stack.connect('u_crash');
    await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
    // The write will run on a worker process that can be killed outright.
    await stack.worker.stop();
    const child = await startWorkerProcess(stack.config);
    stops.push(() => child.kill());
    stack.acme.demo.faults.set({ mode: 'slow', delayMs: 4000 });
    const before = stack.acme.demo.stats().apiRequests;
    const answer = stack.run('acme.create_task', {
      user: 'u_crash',
      input: { title: 'in flight when the worker died' },
    });
    const deadline = Date.now() + 30_000;
    while (stack.acme.demo.stats().apiRequests === before && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    await child.kill();
    stack.acme.demo.faults.reset();
    await stack.restartWorker();

    // The activity's heartbeat stops with the process; the call ends as a timeout.
    const answered = await answer;
    expect(answered.status).toBe(504);
    expect(answered.body.error).toMatchObject({
      code: 'upstream_timeout',
      upstream_status: 504,
      write_may_have_happened: true,
    });
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
  }, 90_000);
});
