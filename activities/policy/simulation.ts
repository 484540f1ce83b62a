import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db } from '../../infra/database/client.js';
import type { Decision, PolicyDocument } from '../../workflows/policy.js';
import type { PolicyVerdict } from '../calls/policy-verdict.js';
import { listPolicies, type PolicyInput } from '../db/policies.js';
import { agentsConcerned } from './governed-agents.js';
import { readRecordedCalls, type CallWindow, type RecordedCall } from './recorded-calls.js';
import { judgeRecordedCalls } from './recorded-verdicts.js';

/**
 * Trying a policy before it governs: the environment's audited calls, judged now by
 * the policies as they are and by the same policies with the candidate in place of the current
 * version, through the code that judges live calls (policyVerdict, conditionJudge). Nothing is
 * written.
 */

/** The most calls one simulation replays, and how many when no window is given. */
export const MAX_SIMULATED_CALLS = 10_000;
export const DEFAULT_SIMULATED_CALLS = 1_000;
/** Audit ids named per kind of change. */
export const SAMPLES_PER_CHANGE = 5;
/** Past this, the calls left are reported not simulated: an answer comes in bounded time. */
const SIMULATION_BUDGET_MS = 20_000;
/** The API's event loop is given back this often, so other requests are not kept waiting. */
const SLICE_MS = 20;

/** The candidate as PUT takes it: name, agents and approval keep their values when left out. */
export type CandidatePolicy = Pick<PolicyInput, 'defaults' | 'rules'> &
  Partial<Pick<PolicyInput, 'name' | 'agents' | 'approval'>>;

export interface DecisionChange {
  from: Decision;
  to: Decision;
  count: number;
  /** Audit event ids, newest first. */
  samples: string[];
}

export interface UnjudgedCall {
  auditId: string;
  /** The version that could not judge it; the candidate when neither could. */
  version: 'candidate' | 'current';
  current: Decision;
  candidate: Decision;
  /** That version's verdict in words, naming the condition and why it could not be judged. */
  reason: string;
}

export interface Simulation {
  policyId: string;
  /** null for a policy the candidate would create. */
  currentVersion: number | null;
  window: CallWindow & { more: boolean; oldest: Date | null; newest: Date | null };
  calls: number;
  unchanged: number;
  changes: DecisionChange[];
  cannotJudge: { count: number; samples: UnjudgedCall[] };
  /** Calls read but not judged, the simulation's time budget spent; null when all were. */
  notSimulated: { count: number; reason: string } | null;
  /** Each side's decisions over the calls judged. */
  decisions: { current: Record<Decision, number>; candidate: Record<Decision, number> };
  tookMs: number;
}

export type SimulationOutcome =
  { ok: true; simulation: Simulation } | { ok: false; agent: string; claimedBy: string };

/** The candidate as the version PUT would write, completed from the current one as PUT does. */
function candidateDocument(
  id: string,
  candidate: CandidatePolicy,
  current: PolicyDocument | undefined,
): PolicyDocument {
  return {
    id,
    version: (current?.version ?? 0) + 1,
    agents: candidate.agents ?? current?.agents ?? [],
    defaults: candidate.defaults,
    rules: candidate.rules,
    approval: candidate.approval ??
      current?.approval ?? { requested_from: [], ttl_seconds: 24 * 3600 },
  };
}

const noDecisions = (): Record<Decision, number> => ({ allow: 0, ask: 0, deny: 0 });

/** Counts verdict pairs into a simulation's figures. */
class Tally {
  unchanged = 0;
  readonly changes = new Map<string, DecisionChange>();
  readonly unjudged: UnjudgedCall[] = [];
  unjudgedCount = 0;
  readonly decisions = { current: noDecisions(), candidate: noDecisions() };

  add(call: RecordedCall, current: PolicyVerdict, candidate: PolicyVerdict): void {
    this.decisions.current[current.decision] += 1;
    this.decisions.candidate[candidate.decision] += 1;
    if (!current.certain || !candidate.certain) {
      this.unjudgedCount += 1;
      if (this.unjudged.length < SAMPLES_PER_CHANGE) {
        const uncertain = candidate.certain ? current : candidate;
        this.unjudged.push({
          auditId: call.id,
          version: candidate.certain ? 'current' : 'candidate',
          current: current.decision,
          candidate: candidate.decision,
          reason: uncertain.reason,
        });
      }
      return;
    }
    if (current.decision === candidate.decision) {
      this.unchanged += 1;
      return;
    }
    const key = `${current.decision}>${candidate.decision}`;
    const change = this.changes.get(key) ?? {
      from: current.decision,
      to: candidate.decision,
      count: 0,
      samples: [],
    };
    change.count += 1;
    if (change.samples.length < SAMPLES_PER_CHANGE) change.samples.push(call.id);
    this.changes.set(key, change);
  }
}

const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** Most calls first; then in the order allow, ask, deny of from and to. */
function ordered(changes: Iterable<DecisionChange>): DecisionChange[] {
  return [...changes].sort(
    (a, b) =>
      b.count - a.count ||
      STRICTNESS[a.from] - STRICTNESS[b.from] ||
      STRICTNESS[a.to] - STRICTNESS[b.to],
  );
}

/** The time of the call that comes first by `before`, or null for none. */
function earliest(calls: readonly RecordedCall[], before: (a: Date, b: Date) => boolean) {
  let found: Date | null = null;
  for (const { time } of calls) if (found === null || before(time, found)) found = time;
  return found;
}

/**
 * Replays the calls of `window` through policy `id` as it is and as `candidate`. A candidate that
 * names an agent another policy governs is refused, as PUT refuses it.
 */
export async function simulatePolicy(
  sql: Db,
  environmentId: string,
  id: string,
  candidate: CandidatePolicy,
  window: CallWindow,
): Promise<SimulationOutcome> {
  const started = performance.now();
  const policies: PolicyDocument[] = await listPolicies(sql, environmentId);
  const current = policies.find((p) => p.id === id);
  const proposed = candidateDocument(id, candidate, current);
  for (const other of policies) {
    if (other.id === id) continue;
    const clash = proposed.agents.find((agent) => other.agents.includes(agent));
    if (clash !== undefined) return { ok: false, agent: clash, claimedBy: other.id };
  }
  const withCandidate = current
    ? policies.map((p) => (p.id === id ? proposed : p))
    : [...policies, proposed];

  const agents = agentsConcerned(policies, withCandidate, id);
  const { calls, more } = await readRecordedCalls(sql, environmentId, window, agents);

  const tally = new Tally();
  let judged = 0;
  let sliceStarted = performance.now();
  await judgeRecordedCalls(
    calls,
    { current: policies, candidate: withCandidate },
    (call, [now, then]) => {
      tally.add(call, now, then);
      judged += 1;
    },
    async () => {
      if (performance.now() - sliceStarted > SLICE_MS) {
        await nextTurn();
        sliceStarted = performance.now();
      }
      return performance.now() - started <= SIMULATION_BUDGET_MS;
    },
  );

  const left = calls.length - judged;
  return {
    ok: true,
    simulation: {
      policyId: id,
      currentVersion: current?.version ?? null,
      window: {
        ...window,
        more,
        oldest: earliest(calls, (a, b) => a < b),
        newest: earliest(calls, (a, b) => a > b),
      },
      calls: calls.length,
      unchanged: tally.unchanged,
      changes: ordered(tally.changes.values()),
      cannotJudge: { count: tally.unjudgedCount, samples: tally.unjudged },
      notSimulated:
        left === 0
          ? null
          : {
              count: left,
              reason: `the simulation's ${String(SIMULATION_BUDGET_MS / 1000)} s were spent; narrow the window`,
            },
      decisions: tally.decisions,
      tookMs: Math.round(performance.now() - started),
    },
  };
}
