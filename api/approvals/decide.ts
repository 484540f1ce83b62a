import { linkRefusal, type LinkProvenance } from '../../activities/approvals/link-provenance.js';
import {
  agentKeyOwners,
  approvalView,
  findApproval,
  type Approval,
} from '../../activities/db/approvals.js';
import { listPolicies } from '../../activities/db/policies.js';
import type { Sql } from '../../infra/database/client.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import { deciderLabel, deciderRefusal, type Decider } from '../../workflows/decider-rules.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import { governingPolicy } from '../../workflows/policy.js';
import {
  ConflictError,
  InsufficientAccessError,
  InvalidRequestError,
  NotFoundError,
} from '../errors.js';
import type { CallWorkflows } from '../temporal/call-workflows.js';

/** A pending approval past its expiry reads as expired, even before its workflow says so. */
export function presentApproval(approval: Approval, now = new Date()): ApprovalView {
  const view = approvalView(approval);
  return view.status === 'pending' && approval.expiresAt <= now
    ? { ...view, status: 'expired', approvals_needed: 0 }
    : view;
}

export async function loadApproval(sql: Sql, environmentId: string, id: string): Promise<Approval> {
  const approval = await findApproval(sql, environmentId, id);
  if (!approval) throw new NotFoundError(`Approval ${id}`);
  return approval;
}

export interface Decision {
  environmentId: string;
  approvalId: string;
  decision: 'approve' | 'reject';
  /** Who decides: a key, a signed-in person, or someone holding a decision link. */
  decider: Decider;
  /**
   * What `decided_by` shows: always the decider's label (deciderLabel), which the workflow makes
   * from `decider` itself; given, it must be that label.
   */
  decidedBy?: string;
  /** Where the decision link went, when the decision comes through one (the hosted page). */
  link?: LinkProvenance;
  /** With an approval, allow the same action for a while. */
  grant?: GrantRequest;
}

/**
 * The longest grant an approver of this agent's calls may make: the policy that governs the
 * agent now says (its `approval.max_grant_seconds`; absent on policies written before grants:
 * 0, grants off), as it is the one that judges the calls the grant would let through.
 */
export async function maxGrantSeconds(
  sql: Sql,
  environmentId: string,
  agentId: string,
): Promise<{ policyId: string | null; seconds: number }> {
  const policy = governingPolicy(await listPolicies(sql, environmentId), agentId);
  return { policyId: policy?.id ?? null, seconds: policy?.approval.max_grant_seconds ?? 0 };
}

/** Why this grant cannot go with this decision (a 400), or nothing. */
async function checkGrant(sql: Sql, approval: Approval, input: Decision): Promise<void> {
  const { grant } = input;
  if (grant === undefined) return;
  if (input.decision !== 'approve') {
    throw new InvalidRequestError('A grant goes only with an approval, not with a rejection.', [
      { path: 'grant', message: 'only with decision approve' },
    ]);
  }
  const max = await maxGrantSeconds(sql, approval.environmentId, approval.agentId);
  if (max.seconds === 0) {
    throw new InvalidRequestError(
      `Grants are off for agent "${approval.agentId}": policy "${max.policyId ?? 'none'}" sets approval.max_grant_seconds to 0. Approve without a grant, or raise the maximum.`,
      [{ path: 'grant', message: 'grants are off (approval.max_grant_seconds 0)' }],
    );
  }
  if (grant.seconds > max.seconds) {
    throw new InvalidRequestError(
      `A grant may last at most ${String(max.seconds)} seconds under policy "${max.policyId ?? 'none'}" (approval.max_grant_seconds); ${String(grant.seconds)} were asked.`,
      [{ path: 'grant.seconds', message: `at most ${String(max.seconds)}` }],
    );
  }
}

/**
 * Why this decider may not decide this approval (four eyes and two-person rules, then the link's
 * rule), or null. `owners`: the owners of the agent's live keys now, refused beside those the
 * approval recorded when it was opened (a key may have been given an owner since).
 */
export function decisionRefusal(
  approval: Pick<Approval, 'agentId' | 'requestedFrom' | 'status' | 'decisions' | 'agentKeyOwners'>,
  decider: Decider,
  link?: LinkProvenance,
  owners: readonly string[] = [],
): string | null {
  return (
    deciderRefusal(
      {
        agentId: approval.agentId,
        requestedFrom: approval.requestedFrom,
        // Deciding twice matters while the approval can still be decided; once settled, a
        // second decision is told so (409), as anyone's is.
        decided:
          approval.status === 'pending'
            ? approval.decisions.map((decision) => decision.identity)
            : [],
        agentKeyOwners: [...approval.agentKeyOwners, ...owners],
      },
      decider,
    ) ?? (link ? linkRefusal(approval, link) : null)
  );
}

/**
 * Every decision path (approve, reject, the management decision, the hosted page, the console)
 * comes here: the approval must be pending and the decider allowed by the rules of
 * decider-rules.ts (never the held agent; only those asked, when any are named; never twice the
 * same person; never an owner of the agent's keys), and a decision link must not have gone through
 * the held agent (link-provenance.ts), before the Update goes to the workflow that holds the call,
 * which checks those rules again. A grant is checked after those: only a decider allowed to
 * approve can make one. Answers the approval after this decision: still pending while it needs
 * more approvals.
 */
export async function decideApproval(
  sql: Sql,
  calls: CallWorkflows,
  input: Decision,
): Promise<ApprovalView> {
  const label = deciderLabel(input.decider);
  if (input.decidedBy !== undefined && input.decidedBy !== label) {
    throw new Error(`decidedBy "${input.decidedBy}" is not the decider's label "${label}"`);
  }
  const approval = await loadApproval(sql, input.environmentId, input.approvalId);
  const current = presentApproval(approval);
  const owners = await agentKeyOwners(sql, approval.environmentId, approval.agentId);
  const refusal = decisionRefusal(approval, input.decider, input.link, owners);
  if (refusal !== null)
    throw new InsufficientAccessError(refusal, { approval: { id: approval.id } });
  if (current.status !== 'pending') {
    throw new ConflictError(
      `Approval ${approval.id} is ${current.status}; only a pending one can be decided.`,
      { approval: { id: approval.id, status: current.status } },
    );
  }
  await checkGrant(sql, approval, input);
  return calls.decide(approval, {
    decision: input.decision,
    decidedBy: label,
    decider: input.decider,
    ...(input.grant ? { grant: input.grant } : {}),
  });
}
