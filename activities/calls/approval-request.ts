import { createHash } from 'node:crypto';
import type { CallRequest, Via } from '../../workflows/call-types.js';

/** How much of a proxied body the approver sees; all of it is counted and hashed. */
export const SHOWN_BODY_BYTES = 64 * 1024;

/** Bytes that cannot be shown as stored text, as base64. */
export interface Base64Value {
  encoding: 'base64';
  content: string;
}

export interface ShownBody {
  /** The whole body's size and digest, so the approver can match bytes they hold elsewhere. */
  bytes: number;
  sha256: string;
  encoding: 'utf8' | 'base64';
  content: string;
  /** True when `content` is only the beginning of the body. */
  truncated: boolean;
}

export type ApprovalRequest =
  | { action: string; user: string; via: Via; input: unknown }
  | {
      action: string;
      user: string;
      via: Via;
      method: string;
      path: string;
      query: string | null;
      headers: Record<string, string | Base64Value>;
      body: ShownBody | null;
    };

/** In a `u` regex a surrogate matches only when it is not half of a pair. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Postgres text and jsonb refuse U+0000, and a lone surrogate has no UTF-8 form. */
function storable(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as text, or null when they are not UTF-8 or the text could not be stored. */
function storableText(bytes: Uint8Array): string | null {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return null;
  }
  return storable(text) ? text : null;
}

/**
 * Where to cut for text: a cut inside a multi-byte character would make a UTF-8 body look binary,
 * so it moves back to the character's first byte (at most 3 bytes).
 */
function textCut(body: Buffer, limit: number): number {
  let end = limit;
  while (end > limit - 3 && ((body[end] ?? 0) & 0xc0) === 0x80) end--;
  return end;
}

function shownBody(bodyBase64: string): ShownBody {
  const body = Buffer.from(bodyBase64, 'base64');
  const truncated = body.length > SHOWN_BODY_BYTES;
  const sha256 = createHash('sha256').update(body).digest('hex');
  const text = storableText(truncated ? body.subarray(0, textCut(body, SHOWN_BODY_BYTES)) : body);
  if (text !== null) {
    return { bytes: body.length, sha256, encoding: 'utf8', content: text, truncated };
  }
  const content = body.subarray(0, SHOWN_BODY_BYTES).toString('base64');
  return { bytes: body.length, sha256, encoding: 'base64', content, truncated };
}

/**
 * A guard: Node's HTTP parser already refuses a NUL in a header and reads values one byte per
 * character (latin1). Should a value jsonb cannot store reach here all the same, it is shown as
 * those bytes, what the app would receive, rather than failing the hold.
 */
function shownHeaderValue(value: string): string | Base64Value {
  if (storable(value)) return value;
  return { encoding: 'base64', content: Buffer.from(value, 'latin1').toString('base64') };
}

/**
 * The approval's `request`: what the decider must see, which is exactly what will
 * run once approved: an action's input, or everything the proxy will send the app (credentials
 * are never among the forwarded headers). Unlike audit, it shows the proxied body.
 */
export function approvalRequest(call: CallRequest): ApprovalRequest {
  const { target } = call;
  const who = { user: call.userExternalId, via: call.via };
  if (target.kind === 'action') return { action: target.action, ...who, input: target.input };
  return {
    action: `${target.app}.proxy`,
    ...who,
    method: target.method,
    path: target.path,
    query: target.query === '' ? null : target.query,
    headers: Object.fromEntries(
      Object.entries(target.headers).map(([name, value]) => [name, shownHeaderValue(value)]),
    ),
    body: target.bodyBase64 === null ? null : shownBody(target.bodyBase64),
  };
}
