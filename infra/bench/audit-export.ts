import { SEEDED_AUDIT_EVENTS, seedAuditTrail } from './audit-seed.js';
import { measure, type Measurement } from './measure.js';
import { rssByRole } from './process-memory.js';
import type { BenchStack } from './stack.js';

/** The goal: 100,000 events exported in seconds on this machine. */
const EVENTS = SEEDED_AUDIT_EVENTS;

export interface ExportResult extends Measurement {
  events: number;
  /** Events streamed per second, at the median export. */
  eventsPerSecond: number;
  /** MB of NDJSON one export streams. */
  megabytes: number;
  /**
   * The API process's resident memory before the exports and at its highest during each: a
   * peak that does not climb from one export to the next is a bound, not a leak.
   */
  apiRssMb: { before: number; peakPerExport: number[] };
}

/**
 * `GET /v1/audit/export` of the whole environment, read to the end by a client that keeps up,
 * one export at a time, while the API's RSS is sampled every 100 ms: the time the goal asks
 * for and the memory bound the README promises (one batch in memory, whatever the length).
 */
export async function auditExportScenario(
  stack: BenchStack,
  runs: number,
  log: (line: string) => void,
): Promise<ExportResult> {
  log(`audit export: writing ${String(EVENTS)} events`);
  await seedAuditTrail(stack, { count: EVENTS });
  const before = (await rssByRole()).api;
  let peak = before;
  const sampling = new AbortController();
  const sampler = (async () => {
    while (!sampling.signal.aborted) {
      peak = Math.max(peak, (await rssByRole()).api);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  let lines = 0;
  let bytes = 0;
  const peaks: number[] = [];
  const request = async () => {
    peak = (await rssByRole()).api;
    const response = await fetch(`${stack.apiUrls[0] ?? ''}/v1/audit/export`, {
      headers: { authorization: `Bearer ${stack.approverKey}` },
    });
    if (response.status !== 200 || !response.body) return false;
    lines = 0;
    bytes = 0;
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (const byte of value) if (byte === 10) lines += 1;
    }
    peaks.push(peak);
    return lines >= EVENTS;
  };
  log(`audit export: ${String(runs)} exports of ${String(EVENTS)}+ events`);
  let measured: Measurement;
  try {
    measured = await measure(request, { concurrency: 1, count: runs });
  } finally {
    sampling.abort();
    await sampler;
  }
  return {
    ...measured,
    events: lines,
    eventsPerSecond: measured.p50 === 0 ? 0 : Math.round((lines / measured.p50) * 1000),
    megabytes: Math.round(bytes / 1e5) / 10,
    apiRssMb: { before, peakPerExport: peaks },
  };
}

export function exportLine(result: ExportResult): string {
  return (
    `audit export of ${String(result.events)} events (${String(result.megabytes)} MB NDJSON): ` +
    `p50 ${String(result.p50)} ms, max ${String(result.max)} ms over ${String(result.requests)} ` +
    `exports (${String(result.errors)} errors), ${String(result.eventsPerSecond)} events/s; ` +
    `API RSS ${String(result.apiRssMb.before)} MB before, at most ` +
    `${result.apiRssMb.peakPerExport.join(' / ')} MB during each\n`
  );
}
