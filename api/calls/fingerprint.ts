import { createHash } from 'node:crypto';
import type { CallTargetInput } from '../../workflows/call-types.js';

/** JSON with object keys sorted at every depth, so `{a,b}` and `{b,a}` are the same call. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  // Undefined (an absent value) has no JSON form; it stands for null.
  return value === undefined ? 'null' : JSON.stringify(value);
}

export interface FingerprintInput {
  environmentId: string;
  agentId: string;
  userExternalId: string;
  target: CallTargetInput;
  idempotencyKey: string | undefined;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Names lower-cased, sorted: the same headers in another order or case are the same call. */
function canonicalHeaders(headers: Record<string, string>): [string, string][] {
  return Object.entries(headers)
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .sort(([a, x], [b, y]) => compare(a, b) || compare(x, y));
}

/**
 * Identical calls share one workflow (and so one approval). Identity is who calls for whom, what
 * (action, or app + method + path + query + every forwarded header), with what input or body, and
 * the caller's Idempotency-Key: a caller who means two identical writes sends two keys. The
 * forwarded headers belong to the identity because they go to the app and are shown to the
 * approver: a retry with other headers is another call, which never runs on an approval given for
 * these.
 */
export function callFingerprint(input: FingerprintInput): string {
  const { target } = input;
  const what =
    target.kind === 'action'
      ? ['action', target.action, canonicalJson(target.input)]
      : [
          'proxy',
          target.app,
          target.method,
          target.path,
          target.query,
          canonicalHeaders(target.headers),
          target.bodyBase64 ?? '',
        ];
  return createHash('sha256')
    .update(
      JSON.stringify([
        input.environmentId,
        input.agentId,
        input.userExternalId,
        ...what,
        input.idempotencyKey ?? null,
      ]),
    )
    .digest('hex');
}
