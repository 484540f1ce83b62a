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

/**
 * Issue 25.3: with OTEL_EXPORTER_OTLP_ENDPOINT set, `gatehouse api` and `gatehouse worker` (real
 * processes, as in production) send one trace per call, API request → Update-with-start →
 * workflow → activity → the app, whose id is the call's audit `trace_id`; no span carries a
 * credential.
 */

let stack: CallStack;
let receiver: OtlpReceiver;
let seeded: SeededConnection;
let api: ServiceProcess;
let worker: ServiceProcess;
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
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '200' };
  [worker, api] = await Promise.all([
    startServiceProcess('worker', stack.config, { env }),
    startServiceProcess('api', stack.config, { env }),
  ]);
  stops.unshift(() => Promise.all([api.stop(), worker.stop()]));
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
