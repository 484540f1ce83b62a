import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import type { ApprovalStatus, ApprovalView, DecisionView } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import { storableJson } from './storable.js';

export interface Approval {
  id: string;
  environmentId: string;
  fingerprint: string;
  workflowId: string;
  action: string;
  scope: CallScope;
  agentId: string;
  userExternalId: string;
  requestedFrom: string[];
  status: ApprovalStatus;
  request: Record<string, unknown>;
  policyId: string;
  policyVersion: number;
  /** The part of the policy that asked for approval, in words. */
  policyRule: string;
  createdAt: Date;
  expiresAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  consumedAt: Date | null;
  /** How many different deciders must approve. */
  quorum: number;
  /** Owners (lower-cased emails) of the held agent's live keys when the call was held. */
  agentKeyOwners: string[];
  /** Every decision so far, oldest first. */
  decisions: StoredDecision[];
}

/** A row of approval_decisions, as the approval's query gathers them (JSON keys as written). */
export interface StoredDecision {
  /** Whom the decision counts as (deciderIdentity). */
  identity: string;
  /** The decider's label. */
  by: string;
  decision: 'approve' | 'reject';
  /** As Postgres writes a timestamptz in JSON. */
  at: string;
  kind: 'key' | 'person' | 'link';
  via: DecisionView['via'];
  name: string | null;
  issuer: string | null;
  subject: string | null;
  email: string | null;
  grant: GrantRequest | null;
}

/** What opening an approval takes: the rest (id, status, times, decision) Postgres fills in. */
export type NewApproval = Pick<
  Approval,
  | 'environmentId'
  | 'fingerprint'
  | 'workflowId'
  | 'action'
  | 'scope'
  | 'agentId'
  | 'userExternalId'
  | 'requestedFrom'
  | 'request'
  | 'policyId'
  | 'policyVersion'
  | 'policyRule'
> & {
  ttlSeconds: number;
  /** How many different deciders must approve; 1 when left out. */
  quorum?: number;
};

/**
 * An approval's columns, with its decisions gathered from approval_decisions, oldest first: what
 * every query here returns as an `Approval`, and the inbox's list (approval-inbox.ts) too.
 */
export const approvalColumns = (sql: Db) => sql`
  id, environment_id, fingerprint, workflow_id, action, scope, agent_id, user_external_id,
  requested_from, status, request, policy_id, policy_version, policy_rule, created_at, expires_at,
  decided_by, decided_at, consumed_at, quorum, agent_key_owners,
  (select coalesce(json_agg(json_build_object(
      'identity', d.identity, 'by', d.label, 'decision', d.decision, 'at', d.decided_at,
      'kind', d.kind, 'via', d.via, 'name', d.name, 'issuer', d.issuer, 'subject', d.subject,
      'email', d.email, 'grant', d.grant_request) order by d.seq), '[]'::json)
    from approval_decisions d where d.approval_id = approvals.id) as decisions`;

/** A decision as the API shows it: who, what, when, how; a person's name and identity. */
export function decisionView(decision: StoredDecision): DecisionView {
  return {
    by: decision.by,
    decision: decision.decision,
    at: new Date(decision.at).toISOString(),
    via: decision.via,
    ...(decision.name === null ? {} : { name: decision.name }),
    ...(decision.issuer === null ? {} : { issuer: decision.issuer }),
    ...(decision.subject === null ? {} : { subject: decision.subject }),
  };
}

/** Approvals a pending approval still needs; none once it is settled. */
export function approvalsNeeded(
  approval: Pick<Approval, 'status' | 'quorum' | 'decisions'>,
): number {
  if (approval.status !== 'pending') return 0;
  const approvals = approval.decisions.filter((d) => d.decision === 'approve').length;
  return Math.max(0, approval.quorum - approvals);
}

export function approvalView(approval: Approval): ApprovalView {
  return {
    id: approval.id,
    status: approval.status,
    requested_from: approval.requestedFrom,
    action: approval.action,
    scope: approval.scope,
    agent_id: approval.agentId,
    user: approval.userExternalId,
    request: approval.request,
    policy: { id: approval.policyId, version: approval.policyVersion, rule: approval.policyRule },
    created_at: approval.createdAt.toISOString(),
    expires_at: approval.expiresAt.toISOString(),
    decided_by: approval.decidedBy,
    decided_at: approval.decidedAt?.toISOString() ?? null,
    quorum: approval.quorum,
    decisions: approval.decisions.map(decisionView),
    approvals_needed: approvalsNeeded(approval),
  };
}

/**
 * The owners of an agent's live API keys (lower-cased emails), who never decide its calls: a
 * subquery, so opening an approval records them in the same statement.
 */
export const agentKeyOwnersQuery = (sql: Db, environmentId: string, agentId: string) => sql`
  select coalesce(array_agg(distinct lower(k.owner)), '{}') from api_keys k
  where k.environment_id = ${environmentId} and k.agent_id = ${agentId}
    and k.revoked_at is null and k.owner is not null`;

/** The owners of an agent's live keys now (the approval keeps those of when it was opened). */
export async function agentKeyOwners(
  sql: Db,
  environmentId: string,
  agentId: string,
): Promise<string[]> {
  const [row]: [{ owners: string[] }?] = await sql`
    select (${agentKeyOwnersQuery(sql, environmentId, agentId)}) as owners`;
  return row?.owners ?? [];
}

/**
 * Opens the call's approval, or returns the pending one it already has: the unique index on
 * pending fingerprints makes "never a second approval" hold even across workflow runs. The
 * request is stored in its storable form (./storable.ts), like audit rows: it is what the
 * approver is shown, and the call itself runs from the workflow's own copy. The owners of the
 * agent's live keys are recorded with it, for the workflow to refuse them as deciders.
 */
export async function openApproval(sql: Db, input: NewApproval): Promise<Approval> {
  const [row]: [Approval?] = await sql`
    insert into approvals (id, environment_id, fingerprint, workflow_id, action, scope, agent_id,
      user_external_id, requested_from, status, request, policy_id, policy_version, policy_rule,
      expires_at, quorum, agent_key_owners)
    values (${uuidv7()}, ${input.environmentId}, ${input.fingerprint}, ${input.workflowId},
      ${input.action}, ${input.scope}, ${input.agentId}, ${input.userExternalId},
      ${input.requestedFrom}, 'pending', ${storableJson(sql, input.request)},
      ${input.policyId}, ${input.policyVersion}, ${input.policyRule},
      now() + make_interval(secs => ${input.ttlSeconds}), ${input.quorum ?? 1},
      (${agentKeyOwnersQuery(sql, input.environmentId, input.agentId)}))
    on conflict (environment_id, fingerprint) where status = 'pending' do nothing
    returning ${approvalColumns(sql)}`;
  if (row) return row;
  const existing = await findPendingApproval(sql, input.environmentId, input.fingerprint);
  if (!existing) throw new Error('approval conflict without a pending approval');
  return existing;
}

export async function findApproval(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<Approval | null> {
  const [row]: [Approval?] = await sql`
    select ${approvalColumns(sql)} from approvals where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

export async function findApprovalById(sql: Db, id: string): Promise<Approval | null> {
  const [row]: [Approval?] =
    await sql`select ${approvalColumns(sql)} from approvals where id = ${id}`;
  return row ?? null;
}

/** The pending, unexpired approval an identical call is waiting on, if any. */
export async function findPendingApproval(
  sql: Db,
  environmentId: string,
  fingerprint: string,
): Promise<Approval | null> {
  const [row]: [Approval?] = await sql`
    select ${approvalColumns(sql)} from approvals
    where environment_id = ${environmentId} and fingerprint = ${fingerprint}
      and status = 'pending' and expires_at > now()`;
  return row ?? null;
}

/**
 * The approval whose workflow an identical call must reach, if any: pending and unexpired (the
 * API answers the call from it), approved and not yet used within the retry window (the call
 * runs in that workflow), or rejected and unexpired (it denies the call). Pending comes first.
 * Its `workflowId` is where the call goes, not an id derived anew: calls held before workflow
 * ids named the action live under the older form. One query for every call, through
 * `approvals_call_idx`.
 */
export async function findStandingApproval(
  sql: Db,
  environmentId: string,
  fingerprint: string,
  retryWindowSeconds: number,
): Promise<Approval | null> {
  const [row]: [Approval?] = await sql`
    select ${approvalColumns(sql)} from approvals
    ${standingApprovalFilter(sql, environmentId, fingerprint, retryWindowSeconds)}`;
  return row ?? null;
}

/**
 * Which approval stands for a call: pending first, else the newest decided one still in force.
 * Shared with the statement that claims a call's Idempotency-Key (call-idempotency-keys.ts),
 * which looks for it in the same round trip.
 */
export function standingApprovalFilter(
  sql: Db,
  environmentId: string,
  fingerprint: string,
  retryWindowSeconds: number,
) {
  return sql`
    where environment_id = ${environmentId} and fingerprint = ${fingerprint}
      and ((status = 'pending' and expires_at > now())
        or (status = 'approved' and consumed_at is null
          and decided_at > now() - make_interval(secs => ${retryWindowSeconds}))
        or (status = 'rejected' and expires_at > now()))
    order by status = 'pending' desc, created_at desc
    limit 1`;
}

/**
 * Moves a pending approval to its end state; null when something else ended it first. Asking
 * again for the state it already has, by the same decider, returns it: the local activity that
 * calls this may run twice.
 */
export async function settleApproval(
  sql: Db,
  id: string,
  status: Exclude<ApprovalStatus, 'pending'>,
  decidedBy: string | null,
): Promise<Approval | null> {
  const [row]: [Approval?] = await sql`
    update approvals set status = ${status}, decided_by = ${decidedBy},
      decided_at = case when ${status} in ('approved', 'rejected') then now() else decided_at end
    where id = ${id} and status = 'pending'
    returning ${approvalColumns(sql)}`;
  if (row) return row;
  const [again]: [Approval?] = await sql`
    select ${approvalColumns(sql)} from approvals
    where id = ${id} and status = ${status} and decided_by is not distinct from ${decidedBy}`;
  return again ?? null;
}

/**
 * Escalation: adds entries to a pending approval's `requested_from` (those already there are
 * kept, in their order), so the people they name may decide it too. Null when the approval is no
 * longer pending; its row is left as it was.
 */
export async function widenApprovalAudience(
  sql: Db,
  environmentId: string,
  id: string,
  entries: readonly string[],
): Promise<Approval | null> {
  const [row]: [Approval?] = await sql`
    update approvals
    set requested_from = requested_from || array(
      select entry from unnest(${entries}::text[]) with ordinality as added(entry, n)
      where not (entry = any(requested_from)) order by n)
    where environment_id = ${environmentId} and id = ${id} and status = 'pending'
    returning ${approvalColumns(sql)}`;
  return row ?? null;
}

export async function consumeApproval(sql: Db, id: string): Promise<void> {
  await sql`update approvals set consumed_at = now() where id = ${id} and consumed_at is null`;
}

/** The workflows holding a user's pending approvals, to cancel when the user is deleted. */
export async function pendingApprovalsOfUser(
  sql: Db,
  environmentId: string,
  userExternalId: string,
): Promise<{ id: string; workflowId: string }[]> {
  return sql<{ id: string; workflowId: string }[]>`
    select id, workflow_id from approvals
    where environment_id = ${environmentId} and user_external_id = ${userExternalId}
      and status = 'pending'`;
}

export interface ApprovalFilters {
  /** As presented: a pending approval past its expiry counts as expired. */
  status?: ApprovalStatus;
  /** Approvals that ask this decider. */
  requestedFrom?: string;
  agentId?: string;
  userExternalId?: string;
  action?: string;
  /** Keyset paging: only approvals older than this id (UUIDv7 ids are time-ordered). */
  before?: string;
}

/** The approvers' inbox: an environment's approvals, newest first. */
export async function listApprovals(
  sql: Db,
  environmentId: string,
  filters: ApprovalFilters,
  limit: number,
): Promise<Approval[]> {
  const { status } = filters;
  const statusIs =
    status === undefined
      ? sql``
      : status === 'pending'
        ? sql`and status = 'pending' and expires_at > now()`
        : status === 'expired'
          ? sql`and (status = 'expired' or (status = 'pending' and expires_at <= now()))`
          : sql`and status = ${status}`;
  return sql<Approval[]>`
    select ${approvalColumns(sql)} from approvals
    where environment_id = ${environmentId} ${statusIs}
      ${filters.requestedFrom === undefined ? sql`` : sql`and ${filters.requestedFrom} = any (requested_from)`}
      ${filters.agentId === undefined ? sql`` : sql`and agent_id = ${filters.agentId}`}
      ${filters.userExternalId === undefined ? sql`` : sql`and user_external_id = ${filters.userExternalId}`}
      ${filters.action === undefined ? sql`` : sql`and action = ${filters.action}`}
      ${filters.before === undefined ? sql`` : sql`and id < ${filters.before}`}
    order by id desc
    limit ${limit}`;
}
