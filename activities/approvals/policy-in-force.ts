import type { Db } from '../../infra/database/client.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import type { Decision } from '../../workflows/policy.js';
import { policyVerdict } from '../calls/policy-verdict.js';
import { conditionJudge } from '../policy/conditions.js';
import { recordedContext, recordedSubject, type RecordedCall } from '../policy/recorded-calls.js';
import type { Approval } from '../db/approvals.js';
import { listPolicies } from '../db/policies.js';

/**
 * What the policy in force now would decide on the held call. An approval outlives
 * the policy version that raised it; once approved, the call runs only if the policy in force
 * when it runs does not deny it. Approvers see it before deciding, and so do webhook consumers.
 */
export interface PolicyInForce {
  /** null when no policy governs the agent any more (then nothing runs). */
  id: string | null;
  version: number | null;
  decision: Decision;
  /** The part of the policy that decides, in words. */
  rule: string;
}

/** An approval as approvers and webhook consumers get it. */
export type PresentedApproval = ApprovalView & { policy_in_force: PolicyInForce };

type Subject = Pick<Approval, 'id' | 'agentId' | 'action' | 'scope' | 'userExternalId' | 'request'>;

/**
 * The verdicts of an environment's policies as they are now, for any number of approvals of it:
 * one read of the policies, then a pure evaluation per approval.
 */
export async function policiesInForce(
  sql: Db,
  environmentId: string,
): Promise<(approval: Subject) => PolicyInForce> {
  const policies = await listPolicies(sql, environmentId);
  return (approval) => {
    // Rule conditions are judged on the held call as the approval shows it, now: the
    // call is judged again when it runs, on itself; shown headers may be masked, so a condition
    // about headers is left unjudged here.
    const held: RecordedCall = {
      id: approval.id,
      time: new Date(),
      action: approval.action,
      scope: approval.scope,
      agentId: approval.agentId,
      via: typeof approval.request.via === 'string' ? approval.request.via : 'api',
      userExternalId: approval.userExternalId,
      approvalId: approval.id,
      request: approval.request,
    };
    const verdict = policyVerdict(
      policies,
      approval.agentId,
      recordedSubject(held),
      conditionJudge(recordedContext(held)),
    );
    return {
      id: verdict.policyId,
      version: verdict.policyVersion,
      decision: verdict.decision,
      rule: verdict.rule,
    };
  };
}

/** One approval's view with the verdict of the policy in force now. */
export async function withPolicyInForce(
  sql: Db,
  approval: Approval,
  view: ApprovalView,
): Promise<PresentedApproval> {
  const inForce = await policiesInForce(sql, approval.environmentId);
  return { ...view, policy_in_force: inForce(approval) };
}
