import { isCpuBudgetSpent, withinCpuBudget } from '../../infra/cpu-budget.js';
import type {
  ConditionJudge,
  ConditionOutcome,
  PolicyDocument,
  PolicyRule,
} from '../../workflows/policy.js';
import { policyVerdict, type PolicyVerdict } from '../calls/policy-verdict.js';
import { conditionJudge, judgeConditionUnbudgeted, type ConditionContext } from './conditions.js';
import { recordedContext, recordedSubject, type RecordedCall } from './recorded-calls.js';

/**
 * The verdicts of both sides of a simulation on recorded calls. A live call judges each condition
 * under its own node:vm timeout, whose watchdog costs ~0.1 ms, many times what a condition costs:
 * here a batch of calls is judged under one timeout instead, no longer than one condition's own
 * budget, so every condition judged in a batch that finishes would have finished live too. A
 * batch that runs out is judged again call by call exactly as live calls are, each condition
 * under its own budget, and the next batches are smaller.
 */

/** Both sides' verdicts on one call: the current version's, then the candidate's. */
export type VerdictPair = readonly [current: PolicyVerdict, candidate: PolicyVerdict];

export interface Sides {
  current: readonly PolicyDocument[];
  candidate: readonly PolicyDocument[];
}

/** The budget of one batch: a condition's own (conditions.ts). */
const BATCH_BUDGET_MS = 100;
const FIRST_BATCH = 64;
const SMALLEST_BATCH = 10;

type Judging = (rule: PolicyRule & { when: string }) => ConditionOutcome;

/**
 * One judge per verdict, answering a condition both sides carry from what the first one found:
 * the same text on the same call is the same.
 */
function sharedJudges(judge: () => Judging): () => ConditionJudge {
  const found = new Map<string, ConditionOutcome>();
  return () => {
    const judging = judge();
    return (rule) => {
      let outcome = found.get(rule.when);
      if (outcome === undefined) {
        outcome = judging(rule);
        found.set(rule.when, outcome);
      }
      return outcome;
    };
  };
}

/** Each verdict with a judge of its own, as a live call gets (its own time budget). */
const liveJudges = (context: ConditionContext) => sharedJudges(() => conditionJudge(context));
const batchJudges = (context: ConditionContext) =>
  sharedJudges(() => (rule) => judgeConditionUnbudgeted(rule.when, context));

function pairOn(
  call: RecordedCall,
  sides: Sides,
  judges: (context: ConditionContext) => () => ConditionJudge,
): VerdictPair {
  const subject = recordedSubject(call);
  const judge = judges(recordedContext(call));
  return [
    policyVerdict(sides.current, call.agentId, subject, judge()),
    policyVerdict(sides.candidate, call.agentId, subject, judge()),
  ];
}

/** Judged as a live call is: each condition under its own budget. */
export function liveVerdicts(call: RecordedCall, sides: Sides): VerdictPair {
  return pairOn(call, sides, liveJudges);
}

/** The verdicts on `calls` within one batch budget, or null when it ran out. */
function batchVerdicts(calls: readonly RecordedCall[], sides: Sides): VerdictPair[] | null {
  const pairs: VerdictPair[] = [];
  try {
    withinCpuBudget(() => {
      for (const call of calls) pairs.push(pairOn(call, sides, batchJudges));
    }, BATCH_BUDGET_MS);
    return pairs;
  } catch (error) {
    if (isCpuBudgetSpent(error)) return null;
    throw error;
  }
}

/**
 * Judges calls in order, a batch at a time, handing each batch's pairs to `take`; `more` is asked
 * before each batch and each call judged one by one (the caller's deadline, its turn to yield).
 */
export async function judgeRecordedCalls(
  calls: readonly RecordedCall[],
  sides: Sides,
  take: (call: RecordedCall, pair: VerdictPair) => void,
  more: () => Promise<boolean>,
): Promise<void> {
  let size = FIRST_BATCH;
  for (let at = 0; at < calls.length;) {
    if (!(await more())) return;
    const batch = calls.slice(at, at + size);
    const pairs = batchVerdicts(batch, sides);
    if (pairs) {
      batch.forEach((call, i) => {
        const pair = pairs[i];
        if (pair) take(call, pair);
      });
      at += batch.length;
      continue;
    }
    size = Math.max(SMALLEST_BATCH, Math.floor(size / 2));
    for (const call of batch) {
      if (!(await more())) return;
      take(call, liveVerdicts(call, sides));
      at += 1;
    }
  }
}
