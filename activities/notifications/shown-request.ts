import type { ApprovalView } from '../../workflows/call-types.js';

/**
 * What a chat message (Slack, Teams) shows of an approval: the request as the approval records it
 * (an action's input, or the proxied request as it will be sent, whose headers and body the
 * record already holds without credentials), cut to a length a chat message can carry, and single
 * values made safe to put on a line. The review page shows the request whole; the message
 * says when it shows less.
 */

/** How much of the request a chat message shows: well inside Slack's 3,000 per text object. */
export const SHOWN_REQUEST_CHARACTERS = 2_000;

/** A single value (an agent id, a user, an action): longer ones are cut. */
export const SHOWN_VALUE_CHARACTERS = 200;

/**
 * Characters that would move or hide text around them: C0 and C1 controls (a newline in a user id
 * would start a forged line), line and paragraph separators, and the bidirectional marks,
 * overrides and isolates (which reorder what follows them). Shown escaped as `\u202e`, so the
 * reader sees that they were there.
 */
const MOVING_IN_A_LINE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
/** The same, except line feeds and tabs: the request is shown as lines. */
const MOVING_IN_A_BLOCK =
  /(?![\n\t])[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const escaped = (char: string): string =>
  `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;

export interface Cut {
  text: string;
  /** Whether characters were left out (the text then ends with `…`). */
  cut: boolean;
  /** Characters (code points) before cutting. */
  length: number;
}

/**
 * At most `max` characters, the last one `…` when some were left out; counted in code points, so
 * no surrogate pair is split.
 */
export function cutText(text: string, max: number): Cut {
  const points = Array.from(text);
  if (points.length <= max) return { text, cut: false, length: points.length };
  return { text: `${points.slice(0, max - 1).join('')}…`, cut: true, length: points.length };
}

/** A value shown on one line: controls and reordering marks escaped, at most 200 characters. */
export function oneLine(value: string, max: number = SHOWN_VALUE_CHARACTERS): string {
  return cutText(value.replace(MOVING_IN_A_LINE, escaped), max).text;
}

export interface ShownRequest {
  /** "Input that will run" or "Request that will be sent". */
  title: string;
  /** At most SHOWN_REQUEST_CHARACTERS (the last `…` when cut), lines kept, controls escaped. */
  text: string;
  cut: boolean;
  /** The whole text's length, in characters. */
  length: number;
}

const stringOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A forwarded header's value: text, or bytes that could not be stored as text. */
function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const { encoding, content } = value as Record<string, unknown>;
    if (encoding === 'base64' && typeof content === 'string') return `${content} (base64)`;
  }
  return '';
}

/** The proxied request as lines: the request line, the forwarded headers, the body recorded. */
function proxyText(request: Record<string, unknown>): string {
  const query = stringOf(request.query);
  const lines = [
    `${stringOf(request.method)} /${stringOf(request.path)}${query ? `?${query}` : ''}`,
  ];
  const headers = request.headers;
  if (headers !== null && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
      lines.push(`${name}: ${headerText(value)}`);
    }
  }
  const body = request.body;
  if (body !== null && typeof body === 'object') {
    const { content, encoding, bytes, truncated } = body as Record<string, unknown>;
    if (typeof content === 'string' && content !== '') {
      lines.push('');
      if (encoding === 'base64') lines.push('(binary, shown as base64)');
      lines.push(content);
      if (truncated === true && typeof bytes === 'number') {
        lines.push(`(the record keeps the first part of ${String(bytes)} bytes)`);
      }
    }
  } else if (typeof request.body_bytes === 'number' && request.body_bytes > 0) {
    lines.push('', `(${String(request.body_bytes)} bytes, not recorded)`);
  }
  return lines.join('\n');
}

/** The request as the approval records it, as text a chat message can carry. */
export function shownRequest(approval: ApprovalView): ShownRequest {
  const { request } = approval;
  const isProxy = typeof request.method === 'string';
  const whole = isProxy ? proxyText(request) : JSON.stringify(request.input ?? null, null, 2);
  const shown = cutText(whole.replace(MOVING_IN_A_BLOCK, escaped), SHOWN_REQUEST_CHARACTERS);
  return {
    title: isProxy ? 'Request that will be sent' : 'Input that will run',
    text: shown.text,
    cut: shown.cut,
    length: shown.length,
  };
}

/** The UTC time to the minute, for readers whose client cannot show it in their own zone. */
export function utcMinute(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return oneLine(iso);
  const text = at.toISOString();
  return `${text.slice(0, 10)} ${text.slice(11, 16)} UTC`;
}

export interface Tally {
  quorum: number;
  approvals: number;
  needed: number;
}

/** How many approvals the call needs and has, as histories before quorums read them (1, 0, 1). */
export function tally(approval: ApprovalView): Tally {
  const decisions = approval.decisions ?? [];
  const quorum = approval.quorum ?? 1;
  const approvals = decisions.filter((d) => d.decision === 'approve').length;
  const needed =
    approval.approvals_needed ??
    (approval.status === 'pending' ? Math.max(quorum - approvals, 0) : 0);
  return { quorum, approvals, needed };
}

/** "1 of 2 approvals, 1 more needed"; "approved by 2 of 2". */
export function tallyText(approval: ApprovalView): string {
  const { quorum, approvals, needed } = tally(approval);
  const of = `${String(approvals)} of ${String(quorum)} ${quorum === 1 ? 'approval' : 'approvals'}`;
  return approval.status === 'pending' && needed > 0 ? `${of}, ${String(needed)} more needed` : of;
}

/** What a settled approval's status says, as a verb for its heading. */
export function settledWord(status: ApprovalView['status']): string {
  switch (status) {
    case 'approved':
      return 'Approved';
    case 'rejected':
      return 'Rejected';
    case 'expired':
      return 'Expired';
    case 'cancelled':
      return 'Withdrawn';
    case 'pending':
      return 'Pending';
  }
}

/** A decider as a message names them: their name and label, or the label alone. */
export function deciderText(decision: { by: string; name?: string }): string {
  return decision.name
    ? `${oneLine(decision.name)} (${oneLine(decision.by)})`
    : oneLine(decision.by);
}
