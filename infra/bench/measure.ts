import { performance } from 'node:perf_hooks';
import { build, type Histogram } from 'hdr-histogram-js';

export interface Measurement {
  requests: number;
  errors: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
  /** Completed requests per second over the run. */
  throughput: number;
}

/** One request of a scenario; false (or a throw) counts as an error. */
export type Request = (i: number) => Promise<boolean>;

function histogram(): Histogram {
  // Microseconds, 1 µs to 10 min, 3 significant digits.
  return build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 600_000_000,
    numberOfSignificantValueDigits: 3,
  });
}

/**
 * Runs `request` from `concurrency` workers until `count` requests are done or `durationMs` has
 * passed, and records each latency in an HDR histogram.
 */
export async function measure(
  request: Request,
  options: { concurrency: number; count?: number; durationMs?: number },
): Promise<Measurement> {
  const latencies = histogram();
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = options.durationMs === undefined ? Infinity : started + options.durationMs;
  const limit = options.count ?? Infinity;
  const worker = async () => {
    while (next < limit && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      const ok = await request(i).catch(() => false);
      latencies.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
      if (!ok) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return settle(latencies, errors, performance.now() - started);
}

function settle(latencies: Histogram, errors: number, elapsedMs: number): Measurement {
  const ms = (micros: number) => Math.round(micros) / 1000;
  const result: Measurement = {
    requests: latencies.totalCount,
    errors,
    p50: ms(latencies.getValueAtPercentile(50)),
    p90: ms(latencies.getValueAtPercentile(90)),
    p95: ms(latencies.getValueAtPercentile(95)),
    p99: ms(latencies.getValueAtPercentile(99)),
    max: ms(latencies.maxValue),
    throughput: Math.round((latencies.totalCount / elapsedMs) * 1000 * 10) / 10,
  };
  latencies.destroy();
  return result;
}

/** Latencies handed in one by one (a round trip timed inside a longer request sequence). */
export function summarize(samplesMs: number[], errors: number, elapsedMs: number): Measurement {
  const latencies = histogram();
  for (const sample of samplesMs) latencies.recordValue(Math.max(1, Math.round(sample * 1000)));
  return settle(latencies, errors, elapsedMs);
}
