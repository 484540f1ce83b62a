import { linkRefusal, type LinkProvenance } from '../../activities/approvals/link-provenance.js';
import { approvalView, findApproval, type Approval } from '../../activities/db/approvals.js';
import type { Sql } from '../../infra/database/client.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import { deciderRefusal } from '../../workflows/decider-rules.js';
import { ConflictError, InsufficientAccessError, NotFoundError } from '../errors.js';
import type { CallWorkflows } from '../temporal/call-workflows.js';

/** A pending approval past its expiry reads as expired, even before its workflow says so. */
export function presentApproval(approval: Approval, now = new Date()): ApprovalView {
  const view = approvalView(approval);
  return view.status === 'pending' && approval.expiresAt <= now
    ? { ...view, status: 'expired' }
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
  /** Who decides: a key's agent id, or the approver a decision link names. */
  decidedBy: string;
  /** Where the decision link went, when the decision comes through one (the hosted page). */
  link?: LinkProvenance;
}

/** Why this decider may not decide this approval (four eyes, then the link's rule), or null. */
export function decisionRefusal(
  approval: Pick<Approval, 'agentId' | 'requestedFrom'>,
  decidedBy: string,
  link?: LinkProvenance,
): string | null {
  return (
    deciderRefusal(
      { agentId: approval.agentId, requestedFrom: approval.requestedFrom },
      decidedBy,
    ) ?? (link ? linkRefusal(approval, link) : null)
  );
}

/**
 * Every decision path (approve, reject, the management decision, the hosted page) comes here:
 * the approval must be pending and the decider allowed by the four-eyes rules (DESIGN.md §3),
 * and a decision link must not have gone through the held agent (link-provenance.ts), before the
 * Update goes to the workflow that holds the call, which checks the four-eyes rules again.
 */
export async function decideApproval(
  sql: Sql,
  calls: CallWorkflows,
  input: Decision,
): Promise<ApprovalView> {
  const approval = await loadApproval(sql, input.environmentId, input.approvalId);
  const current = presentApproval(approval);
  const refusal = decisionRefusal(approval, input.decidedBy, input.link);
  if (refusal !== null)
    throw new InsufficientAccessError(refusal, { approval: { id: approval.id } });
  if (current.status !== 'pending') {
    throw new ConflictError(
      `Approval ${approval.id} is ${current.status}; only a pending one can be decided.`,
      { approval: { id: approval.id, status: current.status } },
    );
  }
  return calls.decide(approval, { decision: input.decision, decidedBy: input.decidedBy });
}
