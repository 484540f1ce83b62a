import type { CallScope } from './catalog/index.js';

/**
 * Policy evaluation (DESIGN.md §4): pure, so the API and the call workflow decide alike.
 */
export type Decision = 'allow' | 'ask' | 'deny';

export interface PolicyRule {
  /** An exact action (`github.create_issue`) or a glob over action names (`github.*`). */
  action?: string;
  app?: string;
  scope?: CallScope;
  decision: Decision;
}

export interface PolicyDocument {
  id: string;
  version: number;
  agents: string[];
  defaults: Record<CallScope, Decision>;
  rules: PolicyRule[];
  approval: { requested_from: string[]; ttl_seconds: number };
}

/** A catalog action of the app a proxy call goes to, as far as policy needs it. */
export interface AppAction {
  /** `<app>.<name>`. */
  action: string;
  scope: CallScope;
}

/**
 * What is being called: a catalog action, or the proxy (the action `<app>.proxy`). The proxy
 * carries its app's catalog actions because the rules written for them bound it (DESIGN.md §4);
 * this module stays pure and never reads the catalog itself.
 */
export type CallTarget =
  | { kind: 'action'; action: string; app: string; scope: CallScope }
  | { kind: 'proxy'; app: string; scope: CallScope; actions: readonly AppAction[] };

export interface Verdict {
  decision: Decision;
  /** Which part of the policy decided, for audit and error messages. */
  matched: string;
  policyId: string;
  policyVersion: number;
}

/** SPEC.md §4.1 proxy rule 3: the HTTP method alone grades a proxy call. */
export function scopeOfMethod(method: string): CallScope {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return 'read';
    case 'DELETE':
      return 'destructive';
    default:
      return 'write';
  }
}

function globMatches(pattern: string, name: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`).test(name);
}

const EXACT_ACTION = 5;
const ACTION_GLOB = 4;

/** The action name a rule is matched against; proxy calls are `<app>.proxy`. */
function actionOf(target: CallTarget): string {
  return target.kind === 'action' ? target.action : `${target.app}.proxy`;
}

/** Higher is more specific: exact action > action glob > app+scope > app > scope. */
function specificity(rule: PolicyRule, target: CallTarget): number | null {
  if (rule.scope !== undefined && rule.scope !== target.scope) return null;
  if (rule.app !== undefined && rule.app !== target.app) return null;
  if (rule.action !== undefined) {
    const action = actionOf(target);
    if (!rule.action.includes('*')) return rule.action === action ? EXACT_ACTION : null;
    return globMatches(rule.action, action) ? ACTION_GLOB : null;
  }
  if (rule.app !== undefined) return rule.scope !== undefined ? 3 : 2;
  return rule.scope !== undefined ? 1 : null;
}

function mostSpecific(
  rules: readonly PolicyRule[],
  target: CallTarget,
): { rule: PolicyRule; rank: number } | null {
  let best: { rule: PolicyRule; rank: number } | null = null;
  for (const rule of rules) {
    const rank = specificity(rule, target);
    // Among equally specific rules the first written wins, so order in the document is meaningful.
    if (rank !== null && (best === null || rank > best.rank)) best = { rule, rank };
  }
  return best;
}

const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The strictest rule that decides one of the app's catalog actions of this scope by naming an
 * action (exact or glob). App and scope rules are left out: the proxy meets those itself.
 */
function strictestActionRule(
  rules: readonly PolicyRule[],
  target: Extract<CallTarget, { kind: 'proxy' }>,
): PolicyRule | null {
  let strictest: PolicyRule | null = null;
  for (const { action, scope } of target.actions) {
    if (scope !== target.scope) continue;
    const best = mostSpecific(rules, { kind: 'action', action, app: target.app, scope });
    if (best === null || best.rank < ACTION_GLOB) continue;
    if (strictest === null || STRICTNESS[best.rule.decision] > STRICTNESS[strictest.decision]) {
      strictest = best.rule;
    }
  }
  return strictest;
}

function describe(rule: PolicyRule): string {
  const parts = [
    rule.action !== undefined ? `action ${rule.action}` : null,
    rule.app !== undefined ? `app ${rule.app}` : null,
    rule.scope !== undefined ? `scope ${rule.scope}` : null,
  ].filter((part): part is string => part !== null);
  return `rule (${parts.join(', ')})`;
}

/**
 * The most specific matching rule decides, else `defaults[scope]`. A proxy call is moreover never
 * less strict than the strictest action rule of its app at its scope, so what an action may not
 * do cannot be done through the proxy, unless a rule names `<app>.proxy` exactly. A glob such as
 * `acme.*` does not lift that floor: it names no action in particular, and `*: allow` would
 * otherwise reopen every denied action through the proxy.
 */
export function evaluatePolicy(policy: PolicyDocument, target: CallTarget): Verdict {
  const base = { policyId: policy.id, policyVersion: policy.version };
  const best = mostSpecific(policy.rules, target);
  const own: Pick<Verdict, 'decision' | 'matched'> = best
    ? { decision: best.rule.decision, matched: describe(best.rule) }
    : { decision: policy.defaults[target.scope], matched: `defaults.${target.scope}` };
  if (target.kind === 'action' || best?.rank === EXACT_ACTION) return { ...base, ...own };
  const floor = strictestActionRule(policy.rules, target);
  if (floor === null || STRICTNESS[floor.decision] <= STRICTNESS[own.decision]) {
    return { ...base, ...own };
  }
  return {
    ...base,
    decision: floor.decision,
    matched: `${describe(floor)} applied to the proxy at scope ${target.scope}`,
  };
}

/** An agent listed by name is governed by that policy; otherwise by the one for `*`. */
export function governingPolicy<P extends Pick<PolicyDocument, 'agents'>>(
  policies: readonly P[],
  agentId: string,
): P | null {
  return (
    policies.find((p) => p.agents.includes(agentId)) ??
    policies.find((p) => p.agents.includes('*')) ??
    null
  );
}
