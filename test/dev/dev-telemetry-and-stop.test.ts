import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../infra/dev/free-port.js';
import {
  devDataFolder,
  interruptGroup,
  spawnDev,
  stopDev,
  untilReady,
  type DevProcess,
} from '../support/dev-process.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

/**
 * `gatehouse dev` observed as `gatehouse api` and `gatehouse worker` are (METRICS_ADDRESS,
 * OTEL_EXPORTER_OTLP_ENDPOINT), and stopped by Ctrl-C in its terminal, which signals its whole
 * process group: the stack still stops in the README's order, each server after what uses it.
 */

let dataDir: string;
let receiver: OtlpReceiver;
let metricsAddress: string;
let dev: DevProcess;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  ({ dir: dataDir } = await devDataFolder('gatehouse-dev-observed-'));
  metricsAddress = `127.0.0.1:${String(await freePort())}`;
  dev = spawnDev({
    dataDir,
    detached: true,
    env: {
      METRICS_ADDRESS: metricsAddress,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });
  await untilReady(dev);
}, 180_000);

afterAll(async () => {
  await stopDev(dev);
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The log file's records, parsed. */
async function logRecords(): Promise<Record<string, unknown>[]> {
  const text = await readFile(path.join(dataDir, 'logs', 'gatehouse.log'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('gatehouse dev', () => {
  it('serves metrics at METRICS_ADDRESS and sends spans to OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    expect(dev.field('Metrics')).toBe(`http://${metricsAddress}/metrics`);
    const answer = await fetch(`${dev.field('API')}/v1/policies/default`, {
      headers: { authorization: `Bearer ${dev.field('Agent key')}` },
    });
    expect(answer.status).toBe(200);
    const traceId = answer.headers.get('x-trace-id') ?? '';
    expect(traceId).toMatch(/^[\da-f]{32}$/);

    const scraped = await fetch(`http://${metricsAddress}/metrics`);
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    // Gatehouse's own, and the Temporal SDK's from its core, on the one endpoint.
    expect(text).toMatch(/^gatehouse_held_calls \d+$/m);
    expect(text).toMatch(/^temporal_\w+/m);

    // Exports are batched: the span arrives within a few schedule delays.
    const deadline = Date.now() + 30_000;
    while (!receiver.spans().some((span) => span.traceId === traceId) && Date.now() < deadline) {
      await sleep(200);
    }
    const spans = receiver.spans().filter((span) => span.traceId === traceId);
    expect(spans).toEqual([
      expect.objectContaining({ service: 'gatehouse-dev', parentSpanId: '' }),
    ]);
  }, 60_000);

  it('stops in order on Ctrl-C in its terminal: API, worker drained, mail catcher, sign-in provider, demo app, Temporal, Postgres', async () => {
    expect(await interruptGroup(dev)).toBe(0);
    expect(dev.output()).toContain('Stopped.');
    // Temporal was still there while the worker drained: no cancelled shutdown call.
    expect(dev.output()).not.toMatch(/shutdown_worker|errored|Cancelled/);
    const records = await logRecords();
    expect(JSON.stringify(records)).not.toMatch(/shutdown_worker|rpc errored/);
    const stopped = records.filter((record) => /stopped$/.test(String(record.msg)));
    expect(stopped.map((record) => record.component)).toEqual([
      'API',
      'worker',
      'mail catcher',
      'sign-in provider',
      'demo app',
      'Temporal dev server',
      'embedded Postgres',
    ]);
    // Each server still served at its turn: the terminal's signal had not stopped it before.
    for (const server of stopped.slice(-2)) {
      expect(server).toMatchObject({ servedUntilItsTurn: true });
    }
  }, 120_000);
});
