import type { CallScope } from './catalog/index.js';

/**
 * Policy evaluation: pure, so the API and the call workflow decide alike.
 */
export type Decision = 'allow' | 'ask' | 'deny';

export interface PolicyRule {
  /** An exact action (`github.create_issue`) or a glob over action names (`github.*`). */
  action?: string;
  app?: string;
  scope?: CallScope;
  /**
   * A CEL condition over the call: the rule applies only where it holds. Checked when
   * the policy is written; judged by the caller of evaluatePolicy, which this module leaves pure.
   */
  when?: string;
  decision: Decision;
  /**
   * Only on a rule that asks: who decides the calls this rule holds, how many must approve, and
   * how long they have, each in place of the policy's own `approval` setting when given.
   */
  approval?: RuleApproval;
}

/**
 * Reminders and escalation of a held call, counted from when it was held: after
 * `remind_after_seconds` those asked are told again; after `escalate_after_seconds` the entries of
 * `escalate_to` are asked too (and told). Each only while nobody has settled the approval, and
 * only before it expires.
 */
export interface NoticeSettings {
  remind_after_seconds?: number;
  escalate_after_seconds?: number;
  escalate_to?: string[];
}

/** A rule's own approval settings: each one left out is the policy's. */
export interface RuleApproval extends NoticeSettings {
  requested_from?: string[];
  quorum?: number;
  ttl_seconds?: number;
}

/**
 * Who decides a held call, how long the approval waits, and how long a grant made with it may last.
 * `quorum`: how many different deciders must approve (absent on policies written before it: 1).
 * `max_grant_seconds`: 0 or absent (policies written before grants) turns grants off.
 */
export interface ApprovalSettings extends NoticeSettings {
  requested_from: string[];
  ttl_seconds: number;
  quorum?: number;
  max_grant_seconds?: number;
}

export interface PolicyDocument {
  id: string;
  version: number;
  agents: string[];
  defaults: Record<CallScope, Decision>;
  rules: PolicyRule[];
  approval: ApprovalSettings;
}

/**
 * The approval settings of a call a rule holds: the rule's own where it has them, else the
 * policy's. Grants stay the policy's alone (its agents' grants are turned off in one place).
 */
export function approvalSettings(
  policy: ApprovalSettings,
  rule: RuleApproval | undefined,
): ApprovalSettings {
  if (rule === undefined) return policy;
  return {
    ...policy,
    ...(rule.requested_from === undefined ? {} : { requested_from: rule.requested_from }),
    ...(rule.quorum === undefined ? {} : { quorum: rule.quorum }),
    ...(rule.ttl_seconds === undefined ? {} : { ttl_seconds: rule.ttl_seconds }),
    ...(rule.remind_after_seconds === undefined
      ? {}
      : { remind_after_seconds: rule.remind_after_seconds }),
    // Escalation is one setting: a rule naming either replaces the policy's whole.
    ...(rule.escalate_after_seconds === undefined && rule.escalate_to === undefined
      ? {}
      : { escalate_after_seconds: rule.escalate_after_seconds, escalate_to: rule.escalate_to }),
  };
}

/** A catalog action of the app a proxy call goes to, as far as policy needs it. */
export interface AppAction {
  /** `<app>.<name>`. */
  action: string;
  scope: CallScope;
}

/**
 * What is being called: a catalog action, or the proxy (the action `<app>.proxy`). The proxy
 * carries its app's actions because the rules written for them bound it (see evaluatePolicy);
 * this module stays pure and never reads the catalog itself. `matched`: the actions whose
 * endpoint the request's method and path are (an OpenAPI app's operations), each at its own
 * grade; absent where no endpoint is known (catalog apps), which judges as none.
 */
export type CallTarget =
  | { kind: 'action'; action: string; app: string; scope: CallScope }
  | {
      kind: 'proxy';
      app: string;
      scope: CallScope;
      actions: readonly AppAction[];
      matched?: readonly AppAction[];
    };

export interface Verdict {
  decision: Decision;
  /** Which part of the policy decided, for audit and error messages. */
  matched: string;
  policyId: string;
  policyVersion: number;
  /**
   * Conditions that could not be judged and so were not let loosen the decision, in words; empty
   * when every condition that mattered was judged.
   */
  unjudged: string[];
  /** False when a condition that could have changed the decision was not judged. */
  certain: boolean;
  /** The approval settings of the rule that asks, when it has its own (see approvalSettings). */
  approval?: RuleApproval;
}

/**
 * A condition's outcome on this call. `error`: it could not be evaluated (a field the call lacks,
 * a wrong type, its budget spent); such a rule may make the decision stricter, never looser.
 */
export type ConditionOutcome = { holds: boolean } | { error: string };

/** Judges a rule's `when` on the call being decided; only asked about rules that have one. */
export type ConditionJudge = (rule: PolicyRule & { when: string }) => ConditionOutcome;

/** Where no condition can be judged (no call at hand): every condition counts as unjudged. */
export const UNKNOWN_CALL: ConditionJudge = () => ({ error: 'no call to judge it on' });

/** The HTTP method alone grades a proxy call: Gatehouse knows nothing else of the endpoint. */
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

const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** A rule that matches the call by action, app and scope, with how its condition came out. */
interface Candidate {
  rule: PolicyRule;
  rank: number;
  /** `none`: no condition. `error`: not judged, so it might hold. */
  condition: 'none' | 'holds' | 'error';
  error?: string;
}

/**
 * Which of two candidates wins where both apply: the more specific; at equal specificity one
 * whose condition holds over one without; then the stricter decision.
 */
function beats(a: Candidate, b: Candidate): boolean {
  if (a.rank !== b.rank) return a.rank > b.rank;
  const conditionedA = a.condition === 'none' ? 0 : 1;
  const conditionedB = b.condition === 'none' ? 0 : 1;
  if (conditionedA !== conditionedB) return conditionedA > conditionedB;
  return STRICTNESS[a.rule.decision] > STRICTNESS[b.rule.decision];
}

function candidatesFor(
  rules: readonly PolicyRule[],
  target: CallTarget,
  judge: JudgeOnce,
): Candidate[] {
  const candidates: Candidate[] = [];
  for (const rule of rules) {
    const rank = specificity(rule, target);
    if (rank === null) continue;
    if (rule.when === undefined) {
      candidates.push({ rule, rank, condition: 'none' });
      continue;
    }
    const outcome = judge(rule as PolicyRule & { when: string });
    if ('error' in outcome)
      candidates.push({ rule, rank, condition: 'error', error: outcome.error });
    else if (outcome.holds) candidates.push({ rule, rank, condition: 'holds' });
  }
  return candidates;
}

/** The decision on one target: the winning candidate, or null where the defaults decide. */
interface Ruling {
  decision: Decision;
  winner: Candidate | null;
  /** Unjudged conditions that were kept from loosening the decision. */
  unjudged: Candidate[];
}

/**
 * The most specific applying rule decides, else the defaults. A rule whose condition could not be
 * judged might hold or not: of every candidate that would win in some outcome of the unjudged
 * conditions, the strictest decides, so an unjudged condition never loosens a decision.
 */
function rule(
  rules: readonly PolicyRule[],
  target: CallTarget,
  fallback: Decision,
  judge: JudgeOnce,
): Ruling {
  const candidates = candidatesFor(rules, target, judge);
  const certain = candidates.filter((c) => c.condition !== 'error');
  // Winners in some outcome: nothing that surely applies beats them.
  const possible = candidates.filter((c) => !certain.some((other) => beats(other, c)));
  const decision = possible.reduce<Decision>(
    (strictest, c) =>
      STRICTNESS[c.rule.decision] > STRICTNESS[strictest] ? c.rule.decision : strictest,
    // The defaults decide in the outcome where no unjudged condition holds, if nothing else does.
    certain.length === 0 ? fallback : 'allow',
  );
  const deciding = possible.filter((c) => c.rule.decision === decision);
  // Of equally strict outcomes, one that surely happens names the decision: a rule that surely
  // applies, else the defaults, else an unjudged rule.
  const sure = deciding.find((c) => c.condition !== 'error');
  const winner =
    sure ??
    (certain.length === 0 && fallback === decision
      ? null
      : (deciding.find((c) => !deciding.some((other) => beats(other, c))) ?? null));
  const unjudged = possible.filter((c) => c.condition === 'error' && c !== winner);
  return { decision, winner, unjudged };
}

/** A judge asked at most once per rule, since the proxy's floor asks about a rule many times. */
type JudgeOnce = (rule: PolicyRule & { when: string }) => ConditionOutcome;

function once(judge: ConditionJudge): JudgeOnce {
  const seen = new Map<PolicyRule, ConditionOutcome>();
  return (rule) => {
    let outcome = seen.get(rule);
    if (outcome === undefined) {
      outcome = judge(rule);
      seen.set(rule, outcome);
    }
    return outcome;
  };
}

/**
 * The strictest ruling, among the app's catalog actions of this scope, made by a rule naming an
 * action (exact or glob). App and scope rules are left out: the proxy meets those itself.
 */
function strictestActionRuling(
  rules: readonly PolicyRule[],
  target: Extract<CallTarget, { kind: 'proxy' }>,
  judge: JudgeOnce,
): Ruling | null {
  let strictest: Ruling | null = null;
  for (const { action, scope } of target.actions) {
    if (scope !== target.scope) continue;
    const actionTarget: CallTarget = { kind: 'action', action, app: target.app, scope };
    const ruling = rule(rules, actionTarget, 'allow', judge);
    if (ruling.winner === null || ruling.winner.rank < ACTION_GLOB) continue;
    if (strictest === null || STRICTNESS[ruling.decision] > STRICTNESS[strictest.decision]) {
      strictest = ruling;
    }
  }
  return strictest;
}

/**
 * The strictest ruling, among the actions whose endpoint the proxy request is, made by a rule
 * naming the action (exact or glob), whatever the action's grade: the request does what the
 * action does, so what the action may not do it may not do either. Each is judged at its own
 * grade, as a call of it would be.
 */
function strictestMatchedRuling(
  rules: readonly PolicyRule[],
  target: Extract<CallTarget, { kind: 'proxy' }>,
  judge: JudgeOnce,
): { ruling: Ruling; action: string } | null {
  let strictest: { ruling: Ruling; action: string } | null = null;
  for (const { action, scope } of target.matched ?? []) {
    const actionTarget: CallTarget = { kind: 'action', action, app: target.app, scope };
    const ruling = rule(rules, actionTarget, 'allow', judge);
    if (ruling.winner === null || ruling.winner.rank < ACTION_GLOB) continue;
    if (strictest === null || STRICTNESS[ruling.decision] > STRICTNESS[strictest.ruling.decision]) {
      strictest = { ruling, action };
    }
  }
  return strictest;
}

function describe(rule: PolicyRule): string {
  const parts = [
    rule.action !== undefined ? `action ${rule.action}` : null,
    rule.app !== undefined ? `app ${rule.app}` : null,
    rule.scope !== undefined ? `scope ${rule.scope}` : null,
    rule.when !== undefined ? `when ${JSON.stringify(rule.when)}` : null,
  ].filter((part): part is string => part !== null);
  return `rule (${parts.join(', ')})`;
}

/** A rule's own approval settings, when it is the rule that made the decision `ask`. */
function ruleApproval(winner: Candidate | null, decision: Decision): { approval?: RuleApproval } {
  const approval = winner?.rule.approval;
  return decision === 'ask' && winner?.rule.decision === 'ask' && approval !== undefined
    ? { approval }
    : {};
}

/** The winning rule in words, with what its condition did. */
function describeWinner(winner: Candidate): string {
  if (winner.condition === 'holds') return `${describe(winner.rule)} held`;
  if (winner.condition === 'error') {
    return `${describe(winner.rule)} could not be judged (${winner.error ?? 'error'}), counted as holding since that is stricter`;
  }
  return describe(winner.rule);
}

function describeUnjudged(candidates: readonly Candidate[]): string[] {
  return candidates.map(
    (c) =>
      `${describe(c.rule)} not applied: its condition could not be judged (${c.error ?? 'error'})`,
  );
}

/**
 * The most specific matching rule decides, else `defaults[scope]`; `judge` says whether a rule's
 * condition holds on this call. A proxy call is moreover never less strict than the strictest
 * action rule of its app at its scope, so what an action may not do cannot be done through the
 * proxy, unless a rule names `<app>.proxy` exactly. A glob such as `acme.*` does not lift that
 * floor: it names no action in particular, and `*: allow` would otherwise reopen every denied
 * action through the proxy. An action rule's condition is judged on the proxy call itself: one
 * about `input` cannot be, so such a rule bounds the proxy as if it held. Where the request is
 * known to be one of the app's actions (`matched`), the rules naming that action bound it too,
 * whatever its grade and the proxy's scope, under the same exception.
 */
export function evaluatePolicy(
  policy: PolicyDocument,
  target: CallTarget,
  judge: ConditionJudge = UNKNOWN_CALL,
): Verdict {
  const base = { policyId: policy.id, policyVersion: policy.version };
  const judgeOnce = once(judge);
  const own = rule(policy.rules, target, policy.defaults[target.scope], judgeOnce);
  const ownVerdict: Verdict = {
    ...base,
    decision: own.decision,
    matched: own.winner ? describeWinner(own.winner) : `defaults.${target.scope}`,
    unjudged: describeUnjudged(own.unjudged),
    certain: own.unjudged.length === 0 && own.winner?.condition !== 'error',
    ...ruleApproval(own.winner, own.decision),
  };
  if (target.kind === 'action' || own.winner?.rank === EXACT_ACTION) return ownVerdict;
  const atScope = strictestActionRuling(policy.rules, target, judgeOnce);
  const byPath = strictestMatchedRuling(policy.rules, target, judgeOnce);
  // The request's own endpoint names the floor where it is as strict as the scope's.
  const floor =
    byPath !== null &&
    (atScope === null || STRICTNESS[byPath.ruling.decision] >= STRICTNESS[atScope.decision])
      ? byPath.ruling
      : atScope;
  if (floor === null || STRICTNESS[floor.decision] <= STRICTNESS[own.decision]) return ownVerdict;
  const where =
    floor === byPath?.ruling ? `the request is ${byPath.action}` : `at scope ${target.scope}`;
  return {
    ...base,
    decision: floor.decision,
    matched: `${floor.winner ? describeWinner(floor.winner) : 'a rule'} applied to the proxy ${where}`,
    unjudged: describeUnjudged([...own.unjudged, ...floor.unjudged]),
    certain:
      own.unjudged.length === 0 &&
      floor.unjudged.length === 0 &&
      floor.winner?.condition !== 'error',
    ...ruleApproval(floor.winner, floor.decision),
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
