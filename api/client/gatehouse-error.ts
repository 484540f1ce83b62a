import type { components } from './generated/connected-users.js';

/** Every error code Gatehouse answers with, as the served document lists them. */
export type ErrorCode = components['schemas']['Error']['error']['code'];

/** The envelope's `error` object, as served: `code`, `message`, `retryable`, and fields of its code. */
export type ErrorBody = components['schemas']['Error']['error'];

export type ApprovalStatus = components['schemas']['Approval']['status'];

/** The approval that holds a call, as `approval_required` names it. */
export interface HeldApproval {
  id: string;
  status: ApprovalStatus;
  /** Who may decide; empty means anyone allowed to decide but the calling agent. */
  requested_from: string[];
  expires_at: string;
}

/** Where an answer came from: the status, the headers and `X-Trace-Id` to quote to support. */
export interface AnsweredWith {
  status: number;
  headers: Headers;
}

/**
 * An error Gatehouse answered with: its `code`, its `message` (for people), whether sending the
 * same request again can succeed (`retryable`), the HTTP status, the trace id, and every field
 * of the envelope (`fields`). Subclasses per code name the fields their code carries.
 */
export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly status: number;
  /** `X-Trace-Id`: quote it when asking about this answer. */
  readonly traceId: string | null;
  readonly headers: Headers;
  /** The envelope's `error` object as sent, fields of its code included. */
  readonly fields: Readonly<ErrorBody>;

  constructor(body: ErrorBody, answer: AnsweredWith) {
    super(body.message);
    this.name = new.target.name;
    this.code = body.code;
    this.retryable = body.retryable;
    this.status = answer.status;
    this.headers = answer.headers;
    this.traceId = answer.headers.get('x-trace-id');
    this.fields = body;
  }

  /** `Retry-After` in seconds, when the answer gave one. */
  get retryAfterSeconds(): number | null {
    const value = Number(this.headers.get('retry-after') ?? Number.NaN);
    return Number.isFinite(value) && value >= 0 ? value : null;
  }
}

/**
 * A failure answer that is not Gatehouse's envelope (a proxy or load balancer in front of it
 * answered): the status and the first bytes of the body, so it is not mistaken for a code.
 */
export class UnexpectedResponseError extends Error {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  readonly retryable: boolean;

  constructor(answer: AnsweredWith, body: string) {
    super(
      `Unexpected answer ${String(answer.status)} (not a Gatehouse error): ${body.slice(0, 200)}`,
    );
    this.name = 'UnexpectedResponseError';
    this.status = answer.status;
    this.headers = answer.headers;
    this.body = body;
    this.retryable = answer.status === 429 || answer.status >= 500;
  }
}
