/**
 * What a governed call is (an action run or a proxy request), what each caller of it is told,
 * and what its approval looks like. Shared by the API, the call workflow and its activities.
 * No token travels in any of these: the upstream activity reads it from Postgres itself.
 */
import type { CallScope } from './catalog/index.js';
import type { ErrorCode } from './error-codes.js';
import type { Decider } from './decider-rules.js';
import type { GrantRequest, GrantView } from './grant-types.js';
import type { Decision } from './policy.js';

/** How the caller reached us; recorded in audit as `via`. */
export type Via = 'api' | 'mcp';

export interface ActionCall {
  kind: 'action';
  /** `<app>.<name>`. */
  action: string;
  app: string;
  scope: CallScope;
  /** The input as validated by the action's schema. */
  input: unknown;
}

export interface ProxyCall {
  kind: 'proxy';
  app: string;
  scope: CallScope;
  method: string;
  /** The path below `/v1/proxy/{app}/`, exactly as the caller sent it (still URL-encoded). */
  path: string;
  /** The raw query string without `?`, or empty. */
  query: string;
  /** Request headers passed on to the app (credentials and hop-by-hop headers removed). */
  headers: Record<string, string>;
  bodyBase64: string | null;
}

export type CallTargetInput = ActionCall | ProxyCall;

/** The start argument of `governedCall`: everything that identifies the call. */
export interface CallRequest {
  environmentId: string;
  environmentName: string;
  agentId: string;
  userExternalId: string;
  via: Via;
  /** sha256 over the call's identity; the workflow id is `call/<env>/<action>/<fingerprint>`. */
  fingerprint: string;
  target: CallTargetInput;
  /** How long an approved call waits for its caller's retry. */
  retryWindowSeconds: number;
  /**
   * The caller's `Idempotency-Key` (also part of the fingerprint): the call's final answer is
   * kept under it for a retry. Absent from calls started before this field existed.
   */
  idempotencyKey?: string;
}

/** Each HTTP request for the call is one Update carrying this. */
export interface CallTicket {
  /** UUIDv7 made by the API for this HTTP request: the Update id and its audit event's id, so a
   * redelivered Update or a re-run local activity never records the request twice. */
  requestId: string;
  traceId: string;
  /**
   * Epoch ms set by the API (REQUEST_DEADLINE_MS after the request came): the workflow refuses
   * this Update once its own clock is past it, and starts the app call for this caller only until
   * then, so a caller told 503 never has its call run behind its back. Absent from Updates sent
   * before deadlines existed.
   */
  deadline?: number;
}

/** The HTTP answer to one caller. */
export type CallAnswer =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'passthrough'; status: number; headers: Record<string, string>; bodyBase64: string }
  | { kind: 'error'; code: ErrorCode; message: string; extra: Record<string, unknown> };

/**
 * Requests an earlier run of the same call answered, by request id, with the answer that run gave.
 * A request whose answer was lost on its way back reaches Temporal again with the same Update id;
 * once the run that answered it has closed, update-with-start may hand it to a newer run, which
 * must neither act on it nor answer it anew: it gives the same answer.
 */
export type AnsweredElsewhere = Record<string, CallAnswer>;

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled';

/** An approval as the API shows it, with what an approver needs to see what is being asked. */
export interface ApprovalView {
  id: string;
  status: ApprovalStatus;
  requested_from: string[];
  action: string;
  scope: CallScope;
  agent_id: string;
  user: string;
  /** What will run once approved: the action's input, or the proxy request as it will be sent. */
  request: Record<string, unknown>;
  /** The policy version and the part of it that asked for this approval. */
  policy: { id: string; version: number; rule: string };
  created_at: string;
  expires_at: string;
  /** The label of the decision that settled it (the one that reached the quorum, or a rejection). */
  decided_by: string | null;
  decided_at: string | null;
  /**
   * How many different deciders must approve; every decision so far, oldest first; and how many
   * approvals are still needed (0 once settled). Absent from the approvals that histories recorded
   * before approvals could need several decisions (the workflow reads them as 1, none, 1).
   */
  quorum?: number;
  decisions?: DecisionView[];
  approvals_needed?: number;
  /** The grant this approval made: only on the answer to the decision that made it. */
  grant?: GrantView;
}

/** One decision on an approval, as the API shows it. */
export interface DecisionView {
  /** The decider's label: a key's agent id, `person:<email>`, `<addressee> (decision link)`. */
  by: string;
  decision: 'approve' | 'reject';
  at: string;
  /**
   * `api` (a key), `console` (a signed-in person), `link` (a decision link), `slack` (a person
   * pressing a button of the approval's Slack message).
   */
  via: 'api' | 'console' | 'link' | 'slack';
  /** A person's name and identity at the identity provider. */
  name?: string;
  issuer?: string;
  subject?: string;
}

/**
 * What opening an approval gives the workflow: the approval, the owners (emails) of the held
 * agent's live API keys, and the identities that decided it already (an approval a previous run of
 * the call opened), which the `decide` validator refuses. Both absent from histories recorded
 * before they were read.
 */
export type OpenedApproval = ApprovalView & { agent_key_owners?: string[]; decided?: string[] };

export interface DecisionInput {
  /** The approval meant; a later run of the same call holds a different one. */
  approvalId: string;
  decision: 'approve' | 'reject';
  /** The decider's label (deciderLabel); with `decider` absent, a key's agent id. */
  decidedBy: string;
  /**
   * Who decides. Absent from Updates sent before deciders had kinds: then a key whose agent id is
   * `decidedBy`. When present, the workflow labels the decision from it.
   */
  decider?: Decider;
  /** Epoch ms: the workflow refuses the decision once its clock is past it (see CallTicket). */
  deadline?: number;
  /**
   * An approval may also grant the same action for a while. Checked by the API against the policy's
   * `approval.max_grant_seconds`; made, in the same transaction as the approval's settling, only
   * once the quorum is reached and when every approving decision asked for one (the narrowest
   * asked: README "Decisions").
   */
  grant?: GrantRequest;
}

/**
 * One decision as the workflow hands it to Postgres: who, what, and the grant it asked for.
 * `id` is made by the workflow, so a local activity run again records it once.
 */
export interface DecisionRecord {
  id: string;
  approvalId: string;
  identity: string;
  label: string;
  decider: Decider;
  decision: 'approve' | 'reject';
  grant?: GrantRequest;
  /** The workflow's clock (epoch ms): a grant the decision makes runs from here. */
  at: number;
}

/** What recording a decision came to. */
export type DecisionOutcome =
  /** Recorded: the approval after it, still pending, or settled by it. */
  | { kind: 'recorded'; approval: ApprovalView }
  /** Something else ended the approval first. */
  | { kind: 'not_pending' }
  /** This decider's identity decided the approval already. */
  | { kind: 'already_decided' };

/**
 * Audit decision values: `allowed` (ran), `blocked` (held for approval), `denied` (by a rule or
 * a rejection), `failed` (allowed, but the service or the app stopped it).
 */
export type AuditDecision = 'allowed' | 'blocked' | 'denied' | 'failed';

/** What the workflow asks an audit write to record for one caller. */
export interface AuditEntry {
  /** The request's id (CallTicket.requestId). */
  id: string;
  traceId: string;
  decision: AuditDecision;
  reason: string;
  approvalId: string | null;
  /** null when the call did not run. */
  response: Record<string, unknown> | null;
}

/**
 * A call's final answer kept under its Idempotency-Key, with what the audit event of the request
 * that got it recorded, for the rows of the retries it answers.
 */
export interface KeptAnswer {
  answer: CallAnswer;
  decision: AuditDecision;
  auditEventId: string;
  response: Record<string, unknown> | null;
  approvalId: string | null;
}

/**
 * What the workflow learns before deciding: the user's connection and the policy's verdict;
 * which of the requests it was handed were answered by an earlier run, and the answer kept under
 * the call's Idempotency-Key, if it has one already (both absent in histories recorded before
 * they existed).
 */
export type Preparation = PreparedCall & {
  answeredElsewhere?: AnsweredElsewhere;
  kept?: KeptAnswer;
};

type PreparedCall =
  | {
      ok: true;
      /**
       * Null only for a call that needs no connection: a tool of a remote MCP server that asks
       * for no authorization, or a call the tool pinning denies before any is read.
       */
      connectedUserId: string | null;
      connectionId: string | null;
      decision: Decision;
      reason: string;
      policyId: string | null;
      policyVersion: number | null;
      /** The part of the policy that decided (a rule, or a default), in words. */
      rule: string;
      /** `quorum` is absent from histories recorded before approvals could need several. */
      approval: {
        requested_from: string[];
        ttl_seconds: number;
        quorum?: number;
        /** Absent from histories recorded before approvers were reminded and escalated to. */
        remind_after_seconds?: number;
        escalate_after_seconds?: number;
        escalate_to?: string[];
      };
      /**
       * The live grant that turned the policy's `ask` into this `allow`, for audit. Absent when no
       * grant decided (and in histories recorded before grants).
       */
      grantId?: string;
    }
  | {
      ok: false;
      code: 'connection_required' | 'connection_expired';
      connectedUserId: string | null;
      connectionId: string | null;
    };

/** A request to the app, built (by the upstream activity) from the catalog or the proxy call. */
export interface OutboundRequest {
  method: string;
  /** Path and query below the app's API base URL, already encoded. */
  pathAndQuery: string;
  headers: Record<string, string>;
  /** JSON for actions; the caller's bytes, as they came, for the proxy. */
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; base64: string } | null;
  /** Actions read the answer as JSON (or text); the proxy passes the bytes on. */
  read: 'parsed' | 'raw';
}

export type UpstreamBody = { kind: 'parsed'; value: unknown } | { kind: 'raw'; base64: string };

/** What the upstream activity saw. */
export type UpstreamOutcome =
  | {
      kind: 'response';
      status: number;
      headers: Record<string, string>;
      body: UpstreamBody;
      /** A 2xx whose body says the action failed (the app's `reportsFailure`). */
      reportsFailure?: boolean;
    }
  | { kind: 'too_large'; status: number; limitBytes: number }
  | { kind: 'connection'; status: 'expired' | 'revoked' | 'missing' | 'unavailable' }
  /** A remote MCP server needs a wider scope than the user granted (a step-up). */
  | { kind: 'reauthorize'; scope: string }
  /** The authorization server refused the operator's MCP OAuth client at a refresh. */
  | { kind: 'client_refused'; mcpOAuthClientId: string; clientId: string }
  /**
   * The app answered something no call can carry (a remote MCP result nested deeper than any
   * answer may be): malformed, as a gateway would say; `reason` says how. Never in histories
   * recorded before it existed.
   */
  | { kind: 'unusable'; status: number; reason: string };

/** What the upstream activity's failures carry: whether the request may have reached the app. */
export interface UpstreamFailureDetails {
  sent: boolean;
}

/** Failure types the upstream activity throws, for the workflow to map. */
export const UPSTREAM_TIMEOUT = 'UpstreamTimeout';
export const UPSTREAM_UNREACHABLE = 'UpstreamUnreachable';

/** Attempts of an allowed read's one step: its retry policy, and when it settles a failure. */
export const READ_ATTEMPTS = 3;
