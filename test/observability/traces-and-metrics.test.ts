import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerOf, startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { bearer } from '../support/keys.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { eventually } from '../support/eventually.js';

/**
 * With OTEL_EXPORTER_OTLP_ENDPOINT set, `gatehouse api` and `gatehouse worker` (real
 * processes, as in production) send one trace per call, API request → Update-with-start →
 * workflow → activity → the app, whose id is the call's audit `trace_id`; no span carries a
 * credential. With METRICS_ADDRESS set, each process serves Prometheus metrics: the API its
 * held calls and refusals, the worker Gatehouse's call, app, refresh and approval metrics beside
 * the Temporal SDK's own.
 */

const TRACE_UI = 'https://traces.example/trace/{trace_id}?from=gatehouse';

let stack: CallStack;
let receiver: OtlpReceiver;
let seeded: SeededConnection;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiMetrics: string;
let workerMetrics: string;
/** What beforeAll started, stopped last first: all of it, even when it failed part-way. */
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stops.unshift(() => receiver.close());
  stack = await startCallStack();
  stops.unshift(() => stack.stop());
  seeded = await stack.connect('u_traced');
  // The calls go to the processes below, traced; the stack's own worker would take some.
  await stack.worker.stop();
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    TRACE_URL_TEMPLATE: TRACE_UI,
  };
  // Port 0: each process binds a free port for its metrics and says which when it is ready.
  const metricsEnv = { ...env, METRICS_ADDRESS: '127.0.0.1:0' };
  [worker, api] = await Promise.all([
    startServiceProcess('worker', stack.config, { env: metricsEnv }).then((started) => {
      stops.unshift(() => started.stop());
      return started;
    }),
    startServiceProcess('api', stack.config, { env: metricsEnv }).then((started) => {
      stops.unshift(() => started.stop());
      return started;
    }),
  ]);
  apiMetrics = api.metricsUrl ?? '';
  workerMetrics = worker.metricsUrl ?? '';
  expect(apiMetrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  expect(workerMetrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
}, 360_000);

afterAll(async () => {
  for (const stop of stops) await stop();
}, 120_000);

async function run(action: string, body: Record<string, unknown>): Promise<Answer> {
  return answerOf(
    await fetch(`${api.url}/v1/actions/${action}/run`, {
      method: 'POST',
      headers: { ...bearer(stack.key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/** The spans of one trace once they include every one `complete` wants (exports are batched). */
async function traceOf(
  traceId: string,
  complete: (spans: ReceivedSpan[]) => boolean,
): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = receiver.spans().filter((span) => span.traceId === traceId);
    if (complete(spans) || Date.now() > deadline) return spans;
    await sleep(200);
  }
}

/** The span's ancestors, nearest first, as far as the trace holds them. */
function ancestors(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let at = span; ;) {
    const parent = spans.find((candidate) => candidate.spanId === at.parentSpanId);
    if (!parent) return chain;
    chain.push(parent);
    at = parent;
  }
}

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("traces one call from the API to the app under its audit event's trace id", async () => {
    const answer = await run('acme.list_tasks', { user: 'u_traced', input: {} });
    expect(answer.status).toBe(200);
    const traceId = answer.headers.get('x-trace-id') ?? '';
    expect(traceId).toMatch(/^[\da-f]{32}$/);

    const listed = await stack.request(stack.key, 'GET', '/v1/audit?limit=1');
    const [newest] = listed.body.data as { id: string; action: string }[];
    expect(newest?.action).toBe('acme.list_tasks');
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${newest?.id ?? ''}`);
    expect(event.body.trace_id).toBe(traceId);

    const upstreamDone = (spans: ReceivedSpan[]) =>
      spans.some((span) => span.name === 'upstream acme') &&
      spans.some((span) => span.name.startsWith('RunWorkflow:')) &&
      spans.some((span) => span.service === 'gatehouse-api' && span.parentSpanId === '');
    const spans = await traceOf(traceId, upstreamDone);
    const names = spans.map((span) => `${span.service} ${span.name}`);

    const root = spans.find((span) => span.service === 'gatehouse-api' && !span.parentSpanId);
    expect(root?.name).toBe('POST /v1/actions/:action/run');
    expect(root?.attributes['http.response.status_code']).toBe(200);
    const upstream = spans.find((span) => span.name === 'upstream acme');
    expect(upstream?.service).toBe('gatehouse-worker');
    expect(upstream?.attributes).toEqual({
      'http.request.method': 'GET',
      'gatehouse.app': 'acme',
      'http.response.status_code': 200,
    });
    // app ← activity ← (workflow's activity start ← workflow or Update) … ← the API request.
    const chain = ancestors(upstream as ReceivedSpan, spans).map((span) => span.name);
    expect(chain[0]).toMatch(/^RunActivity:/);
    expect(chain.some((name) => name.startsWith('StartActivity:'))).toBe(true);
    expect(chain.some((name) => /^(RunWorkflow|HandleUpdate):/.test(name))).toBe(true);
    expect(chain.some((name) => name.startsWith('UpdateWithStartWorkflow:'))).toBe(true);
    expect(chain.at(-1)).toBe(root?.name);
    expect(names.length).toBeGreaterThanOrEqual(6);
  });

  it('puts no secret in any exported span', async () => {
    // A refresh too: the app's client secret and the refresh token are used once more.
    await stack.forgetAccessToken(seeded);
    const refreshed = await run('acme.list_tasks', { user: 'u_traced', input: {} });
    expect(refreshed.status).toBe(200);
    const traceId = refreshed.headers.get('x-trace-id') ?? '';
    await traceOf(traceId, (spans) => spans.filter((s) => s.name === 'upstream acme').length >= 2);

    const exported = receiver.bodies().join('\n');
    expect(exported.length).toBeGreaterThan(0);
    const secrets = [
      stack.key.key,
      stack.approver.key,
      seeded.accessToken,
      seeded.refreshToken,
      'gatehouse-test-secret',
      stack.config.encryption.current.key.toString('base64'),
      'forgotten-by-the-app',
    ];
    for (const secret of secrets) expect(exported).not.toContain(secret);
    // Nor the header that carries them, nor the URL of a request.
    expect(exported.toLowerCase()).not.toContain('bearer');
    expect(exported).not.toContain('url.full');
  });
});

/** A scrape, as Prometheus reads it: each sample's value by its name and labels as written. */
async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*(?:\{.*\})?) (\S+)/.exec(line);
    if (match?.[1] && match[2]) samples.set(match[1], Number(match[2]));
  }
  return samples;
}

/** The sum of a metric's samples whose labels include every one of `labels`. */
function total(samples: Map<string, number>, name: string, labels: string[] = []): number {
  let sum = 0;
  for (const [key, value] of samples) {
    const [metric] = key.split('{');
    if (metric === name && labels.every((label) => key.includes(label))) sum += value;
  }
  return sum;
}

describe('metrics with METRICS_ADDRESS set', () => {
  it("serves Gatehouse's metrics and the Temporal SDK's, and they move with the calls", async () => {
    // A write, held; repeated (answered by the API from Postgres); approved; run on the retry.
    const call = { user: 'u_traced', input: { title: `observed ${String(Date.now())}` } };
    const held = await run('acme.create_task', call);
    expect(held.status).toBe(403);
    expect((await run('acme.create_task', call)).status).toBe(403);
    expect(total(await scrape(apiMetrics), 'gatehouse_held_calls')).toBe(1);
    const approvalId = (held.body.error as { approval: { id: string } }).approval.id;
    const decided = await answerOf(
      await fetch(`${api.url}/v1/approvals/${approvalId}/approve`, {
        method: 'POST',
        headers: bearer(stack.approver.key),
      }),
    );
    expect(decided.status).toBe(200);
    expect((await run('acme.create_task', call)).status).toBe(200);
    // Wrong keys from one address, past RATE_LIMIT_FAILED_AUTH_PER_MINUTE (30).
    for (let i = 0; i < 32; i++) {
      await fetch(`${api.url}/v1/apps`, { headers: bearer('gk_test_wrong') });
    }

    const fromApi = await scrape(apiMetrics);
    expect(total(fromApi, 'gatehouse_held_calls')).toBe(0);
    expect(total(fromApi, 'gatehouse_calls_total', ['decision="blocked"'])).toBe(1);
    expect(total(fromApi, 'gatehouse_rate_limited_total', ['kind="failed_auth"'])).toBeGreaterThan(
      0,
    );

    const fromWorker = await scrape(workerMetrics);
    const calls = (decision: string) =>
      total(fromWorker, 'gatehouse_calls_total', [
        `decision="${decision}"`,
        'app="acme"',
        'via="api"',
      ]);
    // Two reads in the tests above and the approved write, which ran; the hold came from the
    // workflow, its repeat from the API.
    expect(calls('allowed')).toBe(3);
    expect(calls('blocked')).toBe(1);
    // 200, 401 then 200 after the refresh, 201 for the write.
    const upstream = (status: string) =>
      total(fromWorker, 'gatehouse_upstream_requests_total', ['app="acme"', `status="${status}"`]);
    expect([upstream('200'), upstream('401'), upstream('201')]).toEqual([2, 1, 1]);
    expect(total(fromWorker, 'gatehouse_upstream_duration_seconds_count', ['app="acme"'])).toBe(4);
    // The access token forgotten above: one refresh at the app.
    expect(
      total(fromWorker, 'gatehouse_token_refreshes_total', ['app="acme"', 'outcome="refreshed"']),
    ).toBe(1);
    expect(total(fromWorker, 'gatehouse_approval_latency_seconds_count')).toBe(1);
    expect(fromWorker.has('gatehouse_audit_write_retries_total')).toBe(true);
    // The Temporal SDK's own, from its core, on the same endpoint.
    const sdk = [...fromWorker.keys()].filter((key) => key.startsWith('temporal_'));
    expect(
      sdk.some((key) => key.startsWith('temporal_workflow_task_schedule_to_start_latency')),
    ).toBe(true);
    expect(total(fromWorker, 'temporal_workflow_completed')).toBeGreaterThan(0);
  });
});

/** The call workflows of a user, once visibility (eventually consistent) lists them. */
function callWorkflowsOf(user: string): Promise<string[]> {
  return eventually(
    `the call workflows of ${user}`,
    async () => {
      const found: string[] = [];
      for await (const execution of stack.api.temporal.workflow.list({
        query: `WorkflowType = 'governedCall' AND GatehouseUser = '${user}'`,
      })) {
        found.push(execution.workflowId);
      }
      return found.length > 0 ? found : null;
    },
    250,
  );
}

describe('the Temporal UI', () => {
  it("links a call workflow to its first request's audit event and trace", async () => {
    await stack.connect('u_linked');
    const answer = await run('acme.list_tasks', { user: 'u_linked', input: {} });
    expect(answer.status).toBe(200);
    const traceId = answer.headers.get('x-trace-id') ?? '';
    const listed = await stack.request(stack.key, 'GET', '/v1/audit?limit=1');
    const [event] = listed.body.data as { id: string }[];
    const [workflowId] = await callWorkflowsOf('u_linked');
    const description = await stack.api.temporal.workflow.getHandle(workflowId ?? '').describe();
    expect(await description.staticDetails()).toBe(
      [
        `Started by request ${event?.id ?? ''}:`,
        `- audit event: [${event?.id ?? ''}](${api.url}/v1/audit/${event?.id ?? ''})`,
        `- trace: [${traceId}](https://traces.example/trace/${traceId}?from=gatehouse)`,
      ].join('\n'),
    );
  });
});
