import type { Db, Sql } from '../../infra/database/client.js';
import type { ApprovalView, DecisionOutcome, DecisionRecord } from '../../workflows/call-types.js';
import { decidersInWords } from '../../workflows/decider-rules.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import { approvalView, findApprovalById, settleApproval, type Approval } from '../db/approvals.js';
import { grantView, insertGrant, type Grant } from '../db/grants.js';

/**
 * The grant an approval makes: one only when every approving decision asked for one, and then
 * the narrowest asked, each way: the fewest seconds, and for the user alone if any approver asked
 * that. Every approver agreed to at least that much; none agreed to more than they asked.
 */
export function narrowestGrant(asked: readonly (GrantRequest | null)[]): GrantRequest | null {
  if (asked.length === 0) return null;
  let narrowest: GrantRequest | null = null;
  for (const grant of asked) {
    if (grant === null) return null;
    narrowest =
      narrowest === null
        ? { ...grant }
        : {
            for: narrowest.for === 'user' || grant.for === 'user' ? 'user' : 'any_user',
            seconds: Math.min(narrowest.seconds, grant.seconds),
          };
  }
  return narrowest;
}

/** Where a decision came from, as the decisions' `via` says. */
function viaOf(record: DecisionRecord): 'api' | 'console' | 'link' | 'slack' {
  const { decider } = record;
  if (decider.kind === 'key') return 'api';
  if (decider.kind === 'link') return 'link';
  return decider.via;
}

async function insertDecision(tx: Db, record: DecisionRecord): Promise<boolean> {
  const { decider } = record;
  const person = decider.kind === 'person' ? decider : null;
  const rows = await tx`
    insert into approval_decisions (id, approval_id, seq, identity, label, kind, issuer, subject,
      name, email, via, decision, grant_request)
    select ${record.id}, ${record.approvalId}, coalesce(max(seq), 0) + 1, ${record.identity},
      ${record.label}, ${decider.kind}, ${person?.issuer ?? null}, ${person?.subject ?? null},
      ${person?.name ?? null}, ${person?.email ?? null}, ${viaOf(record)}, ${record.decision},
      ${record.grant ? tx.json({ for: record.grant.for, seconds: record.grant.seconds }) : null}
    from approval_decisions where approval_id = ${record.approvalId}
    on conflict (approval_id, identity) do nothing
    returning id`;
  return rows.length === 1;
}

/**
 * Settles the approval when this decision decides it: any rejection rejects; the approval that
 * reaches the quorum approves, with the grant every approver asked for, if they all did.
 */
async function settleIfDecided(
  tx: Db,
  approval: Approval,
  record: DecisionRecord,
): Promise<Grant | null> {
  if (record.decision === 'reject') {
    await settleApproval(tx, approval.id, 'rejected', record.label);
    return null;
  }
  const approving = approval.decisions.filter((decision) => decision.decision === 'approve');
  if (approving.length < approval.quorum) return null;
  const settled = await settleApproval(tx, approval.id, 'approved', record.label);
  const grant = narrowestGrant(approving.map((decision) => decision.grant));
  if (!settled || !grant) return null;
  return insertGrant(tx, {
    environmentId: settled.environmentId,
    agentId: settled.agentId,
    action: settled.action,
    scope: settled.scope,
    userExternalId: grant.for === 'user' ? settled.userExternalId : null,
    approvalId: settled.id,
    createdBy: decidersInWords(approving.map((decision) => decision.by)),
    at: record.at,
    seconds: grant.seconds,
  });
}

/**
 * Records one decision on a pending approval, in one transaction: the decision's row, and when it
 * decides the approval, its settling and the grant it makes. The approval's row is locked first,
 * so decisions arriving together are counted one after the other. Written again (a local activity
 * run anew) the same decision (its `id`) is recognised, and the approval is answered as it is.
 * `settled`: the approval, when this decision settled it (for the decision-latency metric).
 */
export async function recordDecision(
  sql: Sql,
  record: DecisionRecord,
): Promise<DecisionOutcome & { settled?: Approval }> {
  return sql.begin(async (tx) => {
    const [locked]: [{ status: string }?] = await tx`
      select status from approvals where id = ${record.approvalId} for update`;
    if (!locked) return { kind: 'not_pending' as const };
    const [again]: [{ id: string }?] = await tx`
      select id from approval_decisions where id = ${record.id}`;
    // Whether this run settled it: a decision run again must not count the settling twice.
    const firstRun = !again;
    let grant: Grant | null;
    if (firstRun) {
      if (locked.status !== 'pending') return { kind: 'not_pending' as const };
      if (!(await insertDecision(tx, record))) return { kind: 'already_decided' as const };
      const counted = await findApprovalById(tx, record.approvalId);
      if (!counted) return { kind: 'not_pending' as const };
      grant = await settleIfDecided(tx, counted, record);
    } else {
      const [made] = await tx<Grant[]>`
        select id, environment_id, agent_id, action, scope, user_external_id, approval_id,
          created_by, created_at, expires_at, revoked_at, revoked_by
        from grants where approval_id = ${record.approvalId}`;
      grant = made ?? null;
    }
    const now = await findApprovalById(tx, record.approvalId);
    if (!now) return { kind: 'not_pending' as const };
    const view: ApprovalView = {
      ...approvalView(now),
      ...(grant ? { grant: grantView(grant, new Date(record.at)) } : {}),
    };
    return {
      kind: 'recorded' as const,
      approval: view,
      ...(firstRun && now.status !== 'pending' ? { settled: now } : {}),
    };
  });
}
