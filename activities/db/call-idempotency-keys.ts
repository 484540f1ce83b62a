import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import type {
  AuditDecision,
  CallAnswer,
  CallRequest,
  KeptAnswer,
} from '../../workflows/call-types.js';
import type { ApprovalStatus } from '../../workflows/call-types.js';
import { standingApprovalFilter } from './approvals.js';
import { IDEMPOTENCY_RETENTION_SECONDS } from './idempotency-keys.js';

/** A governed call's `Idempotency-Key`: whose it is, and which call it names. */
export interface CallKey {
  environmentId: string;
  agentId: string;
  key: string;
  /** The call's identity (api/calls/fingerprint.ts), the key included. */
  fingerprint: string;
}

/** The key of a call that has one. */
export function callKey(
  call: Pick<CallRequest, 'environmentId' | 'agentId' | 'fingerprint'>,
  key: string,
): CallKey {
  return {
    environmentId: call.environmentId,
    agentId: call.agentId,
    key,
    fingerprint: call.fingerprint,
  };
}

export type CallKeyClaim =
  { kind: 'open' } | { kind: 'replay'; kept: KeptAnswer } | { kind: 'reused' };

interface Row {
  fingerprint: string;
  answer: string | null;
  decision: AuditDecision | null;
  auditEventId: string | null;
  response: Record<string, unknown> | null;
  approvalId: string | null;
}

/** The answer may hold the app's data: sealed at rest, bound to its key. */
const answerAad = (call: CallKey) =>
  `call-idempotency:${call.environmentId}:${call.agentId}:${call.key}`;

function kept(call: CallKey, row: Row, keyring: Keyring): KeptAnswer | null {
  if (row.answer === null || row.decision === null || row.auditEventId === null) return null;
  return {
    answer: JSON.parse(open(keyring, row.answer, answerAad(call))) as CallAnswer,
    decision: row.decision,
    auditEventId: row.auditEventId,
    response: row.response,
    approvalId: row.approvalId,
  };
}

/** Binds a new or expired key to this call; `before` reads the key as it was. */
function claimingCtes(sql: Db, call: CallKey) {
  return sql`
    before as (
      select k.fingerprint, k.answer, k.decision, k.audit_event_id, a.response, a.approval_id
      from call_idempotency_keys k left join audit_events a on a.id = k.audit_event_id
      where k.environment_id = ${call.environmentId} and k.agent_id = ${call.agentId}
        and k.key = ${call.key} and k.expires_at > now()
    ), bound as (
      insert into call_idempotency_keys (environment_id, agent_id, key, fingerprint, expires_at)
      values (${call.environmentId}, ${call.agentId}, ${call.key}, ${call.fingerprint},
              now() + make_interval(secs => ${IDEMPOTENCY_RETENTION_SECONDS}))
      on conflict (environment_id, agent_id, key) do update
        set fingerprint = excluded.fingerprint, answer = null, decision = null,
            audit_event_id = null, created_at = now(), answered_at = null,
            expires_at = excluded.expires_at
        where call_idempotency_keys.expires_at <= now()
    )`;
}

function claimOf(call: CallKey, row: Row | undefined, keyring: Keyring): CallKeyClaim {
  if (!row?.fingerprint) return { kind: 'open' };
  if (row.fingerprint !== call.fingerprint) return { kind: 'reused' };
  const answer = kept(call, row, keyring);
  return answer ? { kind: 'replay', kept: answer } : { kind: 'open' };
}

/**
 * Binds the key to this call on its first use, in one statement, or says what the key holds:
 * another call (reused), this call's final answer (replay), or nothing yet (open: the call goes
 * on, and meets its workflow if one is open). A key past its retention is bound afresh.
 */
export async function claimCallKey(
  sql: Db,
  keyring: Keyring,
  call: CallKey,
): Promise<CallKeyClaim> {
  const [row]: [Row?] = await sql`with ${claimingCtes(sql, call)} select * from before`;
  return claimOf(call, row, keyring);
}

/** The approval standing for a call, as far as the claim's statement reads it. */
export interface StandingRef {
  id: string;
  status: ApprovalStatus;
  workflowId: string;
}

/**
 * claimCallKey, and in the same statement the approval standing for the call
 * (findStandingApproval's filter): a call with a key pays one round trip and one transaction for
 * both, where it paid two.
 */
export async function claimCallKeyAndFindStanding(
  sql: Db,
  keyring: Keyring,
  call: CallKey & { retryWindowSeconds: number },
): Promise<{ claim: CallKeyClaim; standing: StandingRef | null }> {
  const [row]: [(Row & { standingId: string | null } & Omit<StandingRef, 'id'>)?] = await sql`
    with ${claimingCtes(sql, call)}, standing as (
      select id, status, workflow_id from approvals
      ${standingApprovalFilter(sql, call.environmentId, call.fingerprint, call.retryWindowSeconds)}
    )
    select b.*, s.id as standing_id, s.status, s.workflow_id
    from (select) one left join before b on true left join standing s on true`;
  const standing =
    row?.standingId != null
      ? { id: row.standingId, status: row.status, workflowId: row.workflowId }
      : null;
  return { claim: claimOf(call, row, keyring), standing };
}

/** The columns of a kept answer, as a row joined where a call is prepared reads them. */
export interface KeptAnswerRow {
  keptAnswer: string | null;
  keptDecision: AuditDecision | null;
  keptAuditEventId: string | null;
  keptResponse: Record<string, unknown> | null;
  keptApprovalId: string | null;
}

/**
 * The answer kept for this call under its key, as a subquery of one row at most (`kept_*`
 * columns), for the statement that prepares a call (activities/calls/prepare-call.ts): a run
 * that starts after the answer was kept finds it without a round trip of its own. No key, no row.
 */
export function keptAnswerSubquery(sql: Db, call: CallKey | null) {
  return sql`
    select k.answer as kept_answer, k.decision as kept_decision,
      k.audit_event_id as kept_audit_event_id, a.response as kept_response,
      a.approval_id as kept_approval_id
    from call_idempotency_keys k left join audit_events a on a.id = k.audit_event_id
    where ${call !== null} and k.environment_id = ${call?.environmentId ?? null}
      and k.agent_id = ${call?.agentId ?? null} and k.key = ${call?.key ?? null}
      and k.fingerprint = ${call?.fingerprint ?? null} and k.expires_at > now()`;
}

/** The kept answer such a row holds, opened; null when it holds none. */
export function keptAnswerOf(
  keyring: Keyring,
  call: CallKey,
  row: KeptAnswerRow,
): KeptAnswer | null {
  return kept(
    call,
    {
      fingerprint: call.fingerprint,
      answer: row.keptAnswer,
      decision: row.keptDecision,
      auditEventId: row.keptAuditEventId,
      response: row.keptResponse,
      approvalId: row.keptApprovalId,
    },
    keyring,
  );
}

/**
 * A call's final answer as it is kept under its key (by the audit write of the step that gives
 * it, activities/db/audit-events.ts): sealed, since it may hold the app's data.
 */
export interface AnswerToKeep extends CallKey {
  sealedAnswer: string;
  decision: AuditDecision;
}

export function answerToKeep(
  keyring: Keyring,
  call: CallKey,
  answer: Pick<KeptAnswer, 'answer' | 'decision'>,
): AnswerToKeep {
  return {
    ...call,
    sealedAnswer: seal(keyring, JSON.stringify(answer.answer), answerAad(call)),
    decision: answer.decision,
  };
}
