import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestHandler } from 'express';
import { z } from 'zod';

export const faultSettingsSchema = z.object({
  mode: z.enum([
    'rate_limit',
    'unavailable',
    'bad_gateway',
    'gateway_timeout',
    'cut_off',
    'bad_request',
    'slow',
    'nul_and_surrogate',
    'deep_json',
    'none',
  ]),
  retryAfterSeconds: z.number().int().min(0).max(86_400).optional(),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  times: z.number().int().min(1).optional(),
});

export type FaultSettings = z.infer<typeof faultSettingsSchema>;
export type FaultMode = FaultSettings['mode'];

export interface FaultState {
  mode: FaultMode;
  /** null = not given: 429 then says 1 second and 503 sends no Retry-After. */
  retryAfterSeconds: number | null;
  delayMs: number;
  /** Requests left before the fault switches itself off; null = until reset. */
  remaining: number | null;
}

const DEFAULT_RETRY_AFTER_SECONDS = 1;
const DEFAULT_DELAY_MS = 5000;

/**
 * What `nul_and_surrogate` appends to every task title: a NUL and a lone UTF-16 surrogate. JSON
 * carries both (escaped as `\u0000` and `\ud83d`), but Postgres text and jsonb store neither, so
 * an app's answer can bring into Gatehouse what no client request may.
 */
export const HOSTILE_TITLE_SUFFIX = ' \u0000 \ud83d';

function withHostileTitles(body: unknown): unknown {
  if (Array.isArray(body)) return body.map(withHostileTitles);
  if (typeof body !== 'object' || body === null) return body;
  return Object.fromEntries(
    Object.entries(body).map(([key, value]) => [
      key,
      key === 'title' && typeof value === 'string'
        ? `${value}${HOSTILE_TITLE_SUFFIX}`
        : withHostileTitles(value),
    ]),
  );
}

/**
 * How deep `deep_json` nests its answer: far deeper than any JSON a caller may send (256 levels),
 * and deeper than JavaScript's recursive JSON.stringify can write, in 200 KB.
 */
export const DEEP_JSON_LEVELS = 100_000;

/** The fault switches of the resource API; the OAuth endpoints are never affected. */
export class DemoFaults {
  #state: FaultState = noFault();

  set(settings: FaultSettings): FaultState {
    const parsed = faultSettingsSchema.parse(settings);
    this.#state =
      parsed.mode === 'none'
        ? noFault()
        : {
            mode: parsed.mode,
            retryAfterSeconds: parsed.retryAfterSeconds ?? null,
            delayMs: parsed.delayMs ?? DEFAULT_DELAY_MS,
            remaining: parsed.times ?? null,
          };
    return this.current();
  }

  reset(): void {
    this.#state = noFault();
  }

  current(): FaultState {
    return { ...this.#state };
  }

  /** Claims the fault for one request, counting down `times`. */
  take(): FaultState | undefined {
    const state = this.#state;
    if (state.mode === 'none') return undefined;
    if (state.remaining !== null) {
      state.remaining -= 1;
      if (state.remaining <= 0) this.reset();
    }
    return { ...state };
  }
}

function noFault(): FaultState {
  return { mode: 'none', retryAfterSeconds: null, delayMs: 0, remaining: null };
}

/** `stopping` aborts pending slow responses so that stopping the app never waits for them. */
export function faultMiddleware(faults: DemoFaults, stopping: AbortSignal): RequestHandler {
  return (_req, res, next) => {
    const fault = faults.take();
    switch (fault?.mode) {
      case undefined:
      case 'none':
        next();
        return;
      case 'rate_limit':
        res
          .status(429)
          .set('Retry-After', String(fault.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS))
          .json({ error: 'rate_limited' });
        return;
      case 'unavailable':
        if (fault.retryAfterSeconds !== null)
          res.set('Retry-After', String(fault.retryAfterSeconds));
        res.status(503).json({ error: 'unavailable' });
        return;
      case 'bad_gateway':
        res.status(502).json({ error: 'bad_gateway' });
        return;
      case 'gateway_timeout':
        res.status(504).json({ error: 'gateway_timeout' });
        return;
      case 'cut_off':
        // Headers and the start of a body, then the connection drops: the request may have
        // been acted on, and the answer never arrives whole.
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        setTimeout(() => res.destroy(), 50);
        return;
      case 'bad_request':
        res.status(400).json({ error: 'bad_request' });
        return;
      case 'nul_and_surrogate': {
        // The request is served as usual (a write happens); only the answer is hostile.
        const send = res.json.bind(res);
        res.json = ((body: unknown) => send(withHostileTitles(body))) as typeof res.json;
        next();
        return;
      }
      case 'deep_json': {
        // Served as usual too; the answer is valid JSON of arrays nested DEEP_JSON_LEVELS deep.
        const send = res.send.bind(res);
        res.json = (() =>
          send('['.repeat(DEEP_JSON_LEVELS) + ']'.repeat(DEEP_JSON_LEVELS))) as typeof res.json;
        res.type('application/json');
        next();
        return;
      }
      case 'slow':
        sleep(fault.delayMs, undefined, { signal: stopping }).then(
          () => {
            next();
          },
          () => {
            res.destroy();
          },
        );
    }
  };
}
