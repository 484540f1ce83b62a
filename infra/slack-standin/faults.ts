import { z } from 'zod';

/**
 * What the stand-in can do instead of answering, each for the next `times` requests (1 by
 * default) to `method` (any method when absent):
 *
 * - `rate_limited`: HTTP 429 with `Retry-After` (seconds) and `{ok: false, error: "ratelimited"}`,
 *   as Slack's rate-limit guide documents (docs.slack.dev/apis/web-api/rate-limits). The official
 *   client waits that long and tries again, unless told to reject rate-limited calls.
 * - `server_error`: an HTTP 5xx with a plain body, as when Slack itself is failing; the client
 *   throws an HTTP error rather than reading `ok`.
 * - `delay`: the right answer, `ms` late (for a caller's own timeout).
 * - `hold`: the right answer once the test calls `release()`: a slow Slack for exactly as long as
 *   a test needs, with no clock involved.
 * - `answer_held`: the method is carried out at once (a message is posted), and its answer held
 *   until `release()`: what a caller sees when it dies, or times out, after Slack acted and before
 *   the answer reached it.
 */
export const slackFaultSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('rate_limited'),
    retryAfterSeconds: z.number().int().min(0).max(3600).default(1),
    method: z.string().optional(),
    times: z.number().int().min(1).default(1),
  }),
  z.object({
    kind: z.literal('server_error'),
    status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).default(503),
    method: z.string().optional(),
    times: z.number().int().min(1).default(1),
  }),
  z.object({
    kind: z.literal('delay'),
    ms: z.number().int().min(0).max(600_000),
    method: z.string().optional(),
    times: z.number().int().min(1).default(1),
  }),
  z.object({
    kind: z.literal('hold'),
    method: z.string().optional(),
    times: z.number().int().min(1).default(1),
  }),
  z.object({
    kind: z.literal('answer_held'),
    method: z.string().optional(),
    times: z.number().int().min(1).default(1),
  }),
]);

export type SlackFault = z.input<typeof slackFaultSchema>;
export type SlackFaultSettings = z.output<typeof slackFaultSchema>;

/** An injected fault, for the test to wait for and (for `hold`) to end. */
export interface FaultHandle {
  /** Resolves when a request first met the fault. */
  readonly met: Promise<void>;
  /** Lets held requests be answered, and withdraws what is left of the fault. */
  release(): void;
}

interface Armed {
  settings: SlackFaultSettings;
  left: number;
  meet: () => void;
  released: Promise<void>;
  release: () => void;
}

export class Faults {
  private readonly armed: Armed[] = [];
  /** Every fault ever injected, spent ones too: closing releases whatever a hold still keeps. */
  private readonly injected: Armed[] = [];

  inject(fault: SlackFault): FaultHandle {
    const settings = slackFaultSchema.parse(fault);
    let meet = (): void => undefined;
    const met = new Promise<void>((resolve) => {
      meet = resolve;
    });
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const armed: Armed = { settings, left: settings.times, meet, released, release };
    this.armed.push(armed);
    this.injected.push(armed);
    return {
      met,
      release: () => {
        armed.left = 0;
        this.withdraw(armed);
        armed.release();
      },
    };
  }

  /** The fault this request meets, counted against its `times`, with what ends a hold. */
  take(method: string): { settings: SlackFaultSettings; released: Promise<void> } | undefined {
    const armed = this.armed.find(
      (a) => a.left > 0 && (a.settings.method === undefined || a.settings.method === method),
    );
    if (!armed) return undefined;
    armed.left -= 1;
    if (armed.left === 0) this.withdraw(armed);
    armed.meet();
    return { settings: armed.settings, released: armed.released };
  }

  /** Releases every hold (the stand-in is closing). */
  releaseAll(): void {
    this.armed.splice(0);
    for (const armed of this.injected) armed.release();
  }

  private withdraw(armed: Armed): void {
    const index = this.armed.indexOf(armed);
    if (index >= 0) this.armed.splice(index, 1);
  }
}
