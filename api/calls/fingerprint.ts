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

/**
 * DESIGN.md §4: identical calls share one workflow (and so one approval). Identity is who calls
 * for whom, what (action, or app + method + path + query + content type and accept), with what
 * input or body, and the
 * caller's Idempotency-Key: a caller who means two identical writes sends two keys.
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
          // The same bytes as JSON or as text, or asked for in another format, are other calls.
          target.headers['content-type'] ?? '',
          target.headers.accept ?? '',
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
