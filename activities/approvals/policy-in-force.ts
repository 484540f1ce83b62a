import type { Db } from '../../infra/database/client.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import type { Decision } from '../../workflows/policy.js';
import { policyVerdict } from '../calls/policy-verdict.js';
import { conditionJudge } from '../policy/conditions.js';
import { recordedContext, recordedSubject, type RecordedCall } from '../policy/recorded-calls.js';
import type { Approval } from '../db/approvals.js';
import { listPolicies } from '../db/policies.js';
import { openApiProxyBounds } from '../openapi-registry/proxy-operations.js';

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

/** A held proxy call's method and path, as its approval shows them; null for an action. */
function proxyRequestOf(approval: Subject): { method: string; path: string } | null {
  const { method, path } = approval.request;
  if (!approval.action.endsWith('.proxy')) return null;
  return typeof method === 'string' && typeof path === 'string' ? { method, path } : null;
}

/**
 * The verdicts of an environment's policies as they are now, for these approvals of it: one read
 * of the policies (and of the OpenAPI apps their proxy calls go to, whose operations bound them as
 * they bound the live call), then a pure evaluation per approval.
 */
export async function policiesInForce(
  sql: Db,
  environmentId: string,
  approvals: readonly Subject[],
): Promise<(approval: Subject) => PolicyInForce> {
  const [policies, bounds] = await Promise.all([
    listPolicies(sql, environmentId),
    openApiProxyBounds(
      sql,
      environmentId,
      approvals.flatMap((approval) => {
        const request = proxyRequestOf(approval);
        return request ? [{ id: approval.id, action: approval.action, ...request }] : [];
      }),
    ),
  ]);
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
    const proxy = bounds.get(approval.id);
    const verdict = policyVerdict(
      policies,
      approval.agentId,
      { ...recordedSubject(held), ...(proxy ? { proxy } : {}) },
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
  const inForce = await policiesInForce(sql, approval.environmentId, [approval]);
  return { ...view, policy_in_force: inForce(approval) };
}
