import type { CallScope } from '../../workflows/catalog/index.js';
import { listActions } from '../../workflows/catalog/index.js';
import {
  approvalSettings,
  evaluatePolicy,
  type AppAction,
  governingPolicy,
  UNKNOWN_CALL,
  type CallTarget,
  type ConditionJudge,
  type Decision,
  type PolicyDocument,
} from '../../workflows/policy.js';

/** What a call is, as far as policy asks: its app, scope, and action (null for the proxy). */
export interface PolicySubject {
  app: string;
  scope: CallScope;
  /** `<app>.<name>`; null for a proxy call (the action `<app>.proxy`). */
  action: string | null;
  /**
   * For a proxy call to an app outside the catalog (an OpenAPI app): its actions (the accepted
   * operations, at their grades) in place of the catalog's, and the ones whose endpoint the
   * request is (method and path template). Absent for catalog apps: the catalog lists theirs.
   */
  proxy?: { actions: readonly AppAction[]; matched: readonly AppAction[] };
}

/** The verdict of the policy that governs an agent, in the words audit and approvals use. */
export interface PolicyVerdict {
  decision: Decision;
  /** `policy <id> v<version>: <rule> → <decision>`. */
  reason: string;
  /** The part of the policy that decided, in words. */
  rule: string;
  policyId: string | null;
  policyVersion: number | null;
  /** Whom a held call asks, how many must approve, and for how long: a rule's own, or the policy's. */
  approval: PolicyDocument['approval'];
  /** False when a condition that could have changed the decision was not judged. */
  certain: boolean;
}

/**
 * What policy decides on. A proxy call is bounded by the rules of its app's actions (the proxy
 * is never less strict at a scope than they are, nor than the action the request is), which the
 * pure evaluator cannot look up: the catalog's are listed here, an OpenAPI app's come with the
 * subject.
 */
function policyTarget(subject: PolicySubject): CallTarget {
  if (subject.action !== null) {
    return { kind: 'action', action: subject.action, app: subject.app, scope: subject.scope };
  }
  if (subject.proxy) {
    const { actions, matched } = subject.proxy;
    return { kind: 'proxy', app: subject.app, scope: subject.scope, actions, matched };
  }
  const actions = listActions(subject.app).map((action) => ({
    action: `${action.app}.${action.name}`,
    scope: action.scope,
  }));
  return { kind: 'proxy', app: subject.app, scope: subject.scope, actions };
}

/** The verdict on a call by the policy that governs its agent among an environment's policies. */
export function policyVerdict(
  policies: readonly PolicyDocument[],
  agentId: string,
  subject: PolicySubject,
  judge: ConditionJudge = UNKNOWN_CALL,
): PolicyVerdict {
  const policy = governingPolicy(policies, agentId);
  // Each environment is seeded with a `*` policy; should it be edited away, nothing runs.
  if (!policy) {
    return {
      decision: 'deny',
      reason: `no policy governs agent ${agentId}`,
      rule: 'no policy',
      policyId: null,
      policyVersion: null,
      approval: { requested_from: [], ttl_seconds: 0 },
      certain: true,
    };
  }
  const verdict = evaluatePolicy(policy, policyTarget(subject), judge);
  // A condition that could not be judged is named where it was kept from loosening.
  const notes = verdict.unjudged.map((note) => `; ${note}`).join('');
  return {
    decision: verdict.decision,
    reason: `policy ${policy.id} v${String(policy.version)}: ${verdict.matched} → ${verdict.decision}${notes}`,
    rule: verdict.matched,
    policyId: policy.id,
    policyVersion: policy.version,
    approval: approvalSettings(policy.approval, verdict.approval),
    certain: verdict.certain,
  };
}
