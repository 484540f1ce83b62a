import { Environment } from '@marcbachmann/cel-js';
import { isCpuBudgetSpent, withinCpuBudget } from '../../infra/cpu-budget.js';
import type { CallRequest } from '../../workflows/call-types.js';
import type { ConditionJudge, ConditionOutcome, PolicyRule } from '../../workflows/policy.js';
import { caseFoldedExpression, caseFoldedValues } from './case-folded.js';
import { pathReadings } from './path-readings.js';

/**
 * Rule conditions: CEL over the call, through @marcbachmann/cel-js. An operator writes
 * them and a governed agent shapes what they read, so every bound is ours to keep: the text is
 * short and shallow (checked when the policy is written), and evaluation runs under a time budget
 * V8 enforces (node:vm's timeout terminates the running script, the library's code included), so
 * a condition that iterates a large input in a nested way or a backtracking `matches` stops
 * rather than hang a call. Whatever stops a condition makes it unjudged, and evaluatePolicy never
 * lets an unjudged condition loosen a decision.
 */

/** Longest condition text accepted. */
export const MAX_CONDITION_LENGTH = 2000;
/** Wall-clock budget of one condition, and of all conditions of one call. */
const CONDITION_BUDGET_MS = 100;
const CALL_BUDGET_MS = 300;

/** The variables a condition reads, as the README documents them. */
export const CONDITION_VARIABLES = {
  input: 'map',
  request: 'map',
  user: 'string',
  agent: 'string',
  app: 'string',
  action: 'string',
  scope: 'string',
  via: 'string',
  now: 'google.protobuf.Timestamp',
} as const;

const environment = Object.entries(CONDITION_VARIABLES).reduce(
  (env, [name, type]) => env.registerVariable(name, type),
  new Environment({
    limits: {
      maxAstNodes: 400,
      maxDepth: 32,
      maxListElements: 100,
      maxMapEntries: 100,
      maxCallArguments: 8,
    },
  }),
);

type Program = ReturnType<Environment['parse']>;

export type ConditionCheck =
  { ok: true } | { ok: false; message: string; line: number; column: number };

/** The message without the library's source excerpt (it repeats the expression). */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.trim() ?? message;
}

function position(expression: string, offset: number): { line: number; column: number } {
  const before = expression.slice(0, Math.max(0, Math.min(offset, expression.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

function offsetOf(error: unknown): number {
  const node = (error as { node?: { pos?: unknown } } | null)?.node;
  return typeof node?.pos === 'number' ? node.pos : 0;
}

/** Parses and type-checks a condition as the policy that carries it is written. */
export function checkCondition(expression: string): ConditionCheck {
  if (expression.length > MAX_CONDITION_LENGTH) {
    return {
      ok: false,
      message: `longer than ${String(MAX_CONDITION_LENGTH)} characters`,
      line: 1,
      column: MAX_CONDITION_LENGTH + 1,
    };
  }
  try {
    const checked = environment.check(expression);
    if (!checked.valid) {
      const error: unknown = checked.error;
      return { ok: false, message: firstLine(error), ...position(expression, offsetOf(error)) };
    }
    if (checked.type !== 'bool' && checked.type !== 'dyn') {
      return {
        ok: false,
        message: `must be a bool, is a ${String(checked.type)}`,
        line: 1,
        column: 1,
      };
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, message: firstLine(error), ...position(expression, offsetOf(error)) };
  }
}

/** A condition as written, and read ignoring case where it has string literals to fold. */
interface Programs {
  asWritten: Program;
  ignoringCase: Program;
}

/** Parsed programs by text: the same few conditions decide every call. */
const programs = new Map<string, Programs>();
const MAX_PROGRAMS = 2000;

function programsOf(expression: string): Programs {
  let found = programs.get(expression);
  if (!found) {
    const asWritten = environment.parse(expression);
    let ignoringCase = asWritten;
    const folded = caseFoldedExpression(expression, asWritten.ast);
    try {
      if (folded !== null) ignoringCase = environment.parse(folded);
    } catch {
      // A literal CEL cannot take back folded (a lone surrogate): read with the call's strings
      // folded alone, which can still only add a reading.
    }
    found = { asWritten, ignoringCase };
    if (programs.size >= MAX_PROGRAMS) programs.clear();
    programs.set(expression, found);
  }
  return found;
}

/** What a condition reads about a call. */
export type ConditionContext = Record<keyof typeof CONDITION_VARIABLES, unknown>;

function decodedPath(raw: string): string {
  try {
    return `/${decodeURIComponent(raw)}`;
  } catch {
    return `/${raw}`;
  }
}

/** The query as a map of first values; a repeated name keeps its first value. */
function queryMap(query: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    if (!(name in map)) map[name] = value;
  }
  return map;
}

/**
 * The variables for a call. A proxy call has `request` (its path decoded, and still encoded in
 * `raw_path`, as the app receives it) and an empty `input`; an action run has `input` and an
 * empty `request`, so a condition about the other kind is unjudged on it rather than quietly
 * false. Each condition is also judged on the other readings an app may make of the path.
 */
export function conditionContext(call: CallRequest, at: Date): ConditionContext {
  const { target } = call;
  const action = target.kind === 'action' ? target.action : `${target.app}.proxy`;
  return {
    input: target.kind === 'action' ? (target.input ?? {}) : {},
    request:
      target.kind === 'proxy'
        ? {
            method: target.method.toUpperCase(),
            path: decodedPath(target.path),
            raw_path: `/${target.path}`,
            query: queryMap(target.query),
            headers: Object.fromEntries(
              Object.entries(target.headers).map(([name, value]) => [name.toLowerCase(), value]),
            ),
          }
        : {},
    user: call.userExternalId,
    agent: call.agentId,
    app: target.app,
    action,
    scope: target.scope,
    via: call.via,
    now: at,
  };
}

/** One reading of the call: as made, or with another reading of the proxy's path. */
interface Reading {
  /** How the path is read, for the audit's reason; null for an action run (one reading). */
  label: string | null;
  path: string | null;
  ignoringCase: boolean;
  context: ConditionContext;
}

const readingsByContext = new WeakMap<ConditionContext, readonly Reading[]>();

function proxyRequestOf(context: ConditionContext): Record<string, unknown> | null {
  const { request } = context;
  if (typeof request !== 'object' || request === null) return null;
  const fields = request as Record<string, unknown>;
  return typeof fields.path === 'string' && typeof fields.raw_path === 'string' ? fields : null;
}

/** What a condition is judged on: the call, then each other reading an app may make of its path. */
function readingsOf(context: ConditionContext): readonly Reading[] {
  let readings = readingsByContext.get(context);
  if (readings) return readings;
  const request = proxyRequestOf(context);
  if (!request) {
    readings = [{ label: null, path: null, ignoringCase: false, context }];
  } else {
    const folded = caseFoldedValues({ ...context, now: null }) as ConditionContext;
    readings = pathReadings(String(request.path), String(request.raw_path)).map((reading) => ({
      label: reading.label,
      path: reading.path,
      ignoringCase: reading.ignoringCase,
      context: reading.ignoringCase
        ? {
            ...folded,
            now: context.now,
            request: {
              ...(folded.request as Record<string, unknown>),
              path: reading.path,
              raw_path: reading.rawPath,
            },
          }
        : context,
    }));
  }
  readingsByContext.set(context, readings);
  return readings;
}

type Evaluated = { value: unknown } | { thrown: unknown };

/** The condition on each reading; a time budget spent stops them all. */
function evaluateOn(condition: Programs, readings: readonly Reading[]): Evaluated[] {
  return readings.map(({ context, ignoringCase }) => {
    try {
      const program = ignoringCase ? condition.ignoringCase : condition.asWritten;
      const value: unknown = program(context);
      return { value };
    } catch (error) {
      if (isCpuBudgetSpent(error)) throw error;
      return { thrown: error };
    }
  });
}

function outcomeOf(evaluated: Evaluated): ConditionOutcome {
  if ('thrown' in evaluated) return { error: firstLine(evaluated.thrown) };
  const { value } = evaluated;
  if (typeof value !== 'boolean') return { error: `evaluates to a ${typeof value}, not a bool` };
  return { holds: value };
}

/**
 * The condition's outcome on the call: an error on any reading is the error; where it holds on
 * one reading of the path and not on another, its outcome depends on how the app matches paths,
 * so it is left unjudged, and evaluatePolicy takes the stricter of the two.
 */
function combined(readings: readonly Reading[], evaluated: readonly Evaluated[]): ConditionOutcome {
  const outcomes = evaluated.map(outcomeOf);
  const failed = outcomes.find((outcome) => 'error' in outcome);
  if (failed) return failed;
  const holding = outcomes.findIndex((outcome) => 'holds' in outcome && outcome.holds);
  const notHolding = outcomes.findIndex((outcome) => 'holds' in outcome && !outcome.holds);
  if (holding === -1 || notHolding === -1) return outcomes[0] ?? { error: 'nothing to judge' };
  const described = (reading: Reading | undefined): string =>
    `${JSON.stringify(reading?.path)} ${reading?.label ?? ''}`.trim();
  return {
    error: `its outcome depends on how the app reads the path: it holds on ${described(readings[holding])} and not on ${described(readings[notHolding])}`,
  };
}

/** One condition on one context, within `budgetMs`. */
export function judgeCondition(
  expression: string,
  context: ConditionContext,
  budgetMs: number = CONDITION_BUDGET_MS,
): ConditionOutcome {
  if (budgetMs < 1) return { error: 'the evaluation budget of the call is spent' };
  try {
    const condition = programsOf(expression);
    const readings = readingsOf(context);
    const evaluated = withinCpuBudget(() => evaluateOn(condition, readings), budgetMs);
    return combined(readings, evaluated);
  } catch (error) {
    if (isCpuBudgetSpent(error)) {
      return { error: `took longer than ${String(Math.floor(budgetMs))} ms` };
    }
    return { error: firstLine(error) };
  }
}

/**
 * One condition on one context with no time budget of its own, outcomes as judgeCondition's: for
 * a caller that runs many under one budget it enforces itself (the policy simulation,
 * which would otherwise pay node:vm's watchdog for each of tens of thousands of conditions).
 */
export function judgeConditionUnbudgeted(
  expression: string,
  context: ConditionContext,
): ConditionOutcome {
  try {
    const readings = readingsOf(context);
    return combined(readings, evaluateOn(programsOf(expression), readings));
  } catch (error) {
    return { error: firstLine(error) };
  }
}

/** Judges each rule's condition on this call, all of them within one budget. */
export function conditionJudge(context: ConditionContext): ConditionJudge {
  const started = performance.now();
  return (rule: PolicyRule & { when: string }) => {
    const left = CALL_BUDGET_MS - (performance.now() - started);
    return judgeCondition(rule.when, context, Math.min(CONDITION_BUDGET_MS, left));
  };
}

/** The judge of a call about to be decided, at `at` (the workflow's clock where it runs). */
export function callConditionJudge(call: CallRequest, at: Date): ConditionJudge {
  return conditionJudge(conditionContext(call, at));
}
