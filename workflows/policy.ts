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

/** What is being called: a catalog action, or the proxy (which matches app and scope rules only). */
export type CallTarget =
  | { kind: 'action'; action: string; app: string; scope: CallScope }
  | { kind: 'proxy'; app: string; scope: CallScope };

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

/** Higher is more specific: exact action > action glob > app+scope > app > scope. */
function specificity(rule: PolicyRule, target: CallTarget): number | null {
  if (rule.scope !== undefined && rule.scope !== target.scope) return null;
  if (rule.app !== undefined && rule.app !== target.app) return null;
  if (rule.action !== undefined) {
    if (target.kind === 'proxy') return null;
    if (!rule.action.includes('*')) return rule.action === target.action ? 5 : null;
    return globMatches(rule.action, target.action) ? 4 : null;
  }
  if (rule.app !== undefined) return rule.scope !== undefined ? 3 : 2;
  return rule.scope !== undefined ? 1 : null;
}

function describe(rule: PolicyRule): string {
  const parts = [
    rule.action !== undefined ? `action ${rule.action}` : null,
    rule.app !== undefined ? `app ${rule.app}` : null,
    rule.scope !== undefined ? `scope ${rule.scope}` : null,
  ].filter((part): part is string => part !== null);
  return `rule (${parts.join(', ')})`;
}

export function evaluatePolicy(policy: PolicyDocument, target: CallTarget): Verdict {
  let best: { rule: PolicyRule; rank: number } | null = null;
  for (const rule of policy.rules) {
    const rank = specificity(rule, target);
    // Among equally specific rules the first written wins, so order in the document is meaningful.
    if (rank !== null && (best === null || rank > best.rank)) best = { rule, rank };
  }
  const base = { policyId: policy.id, policyVersion: policy.version };
  if (best) return { ...base, decision: best.rule.decision, matched: describe(best.rule) };
  return { ...base, decision: policy.defaults[target.scope], matched: `defaults.${target.scope}` };
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
