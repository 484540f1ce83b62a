import { describe, expect, it } from '@jest/globals';
import {
  callConditionJudge,
  checkCondition,
  conditionContext,
  judgeCondition,
  MAX_CONDITION_LENGTH,
} from '../../activities/policy/conditions.js';
import type { CallRequest } from '../../workflows/call-types.js';
import {
  evaluatePolicy,
  type CallTarget,
  type ConditionJudge,
  type PolicyDocument,
  type PolicyRule,
} from '../../workflows/policy.js';

function policy(rules: PolicyRule[]): PolicyDocument {
  return {
    id: 'p',
    version: 1,
    agents: ['*'],
    defaults: { read: 'allow', write: 'allow', destructive: 'deny' },
    rules,
    approval: { requested_from: [], ttl_seconds: 60 },
  };
}

const createTask: CallTarget = {
  kind: 'action',
  action: 'acme.create_task',
  app: 'acme',
  scope: 'write',
};

function actionCall(input: unknown): CallRequest {
  return {
    environmentId: 'e',
    environmentName: 'dev',
    agentId: 'billing-bot',
    userExternalId: 'alice',
    via: 'api',
    fingerprint: 'f',
    target: { ...createTask, kind: 'action', input } as CallRequest['target'],
    retryWindowSeconds: 60,
  };
}

function proxyCall(method: string, path: string, query = ''): CallRequest {
  return {
    ...actionCall({}),
    target: {
      kind: 'proxy',
      app: 'acme',
      scope: method === 'GET' ? 'read' : 'write',
      method,
      path,
      query,
      headers: { 'X-Trace': 'abc' },
      bodyBase64: null,
    },
  };
}

const at = new Date('2026-11-25T10:30:00Z');
const judgeOn = (call: CallRequest): ConditionJudge => callConditionJudge(call, at);

const large = 'has(input.notes) && size(input.notes) > 100';

describe('rule conditions', () => {
  it('holds a large write and lets a small one through', () => {
    const rules: PolicyRule[] = [{ action: 'acme.create_task', when: large, decision: 'ask' }];
    const big = evaluatePolicy(
      policy(rules),
      createTask,
      judgeOn(actionCall({ title: 't', notes: 'x'.repeat(500) })),
    );
    expect(big).toMatchObject({ decision: 'ask', certain: true });
    expect(big.matched).toBe(`rule (action acme.create_task, when ${JSON.stringify(large)}) held`);
    const small = evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({ title: 't' })));
    expect(small).toMatchObject({ decision: 'allow', matched: 'defaults.write', certain: true });
  });

  it('ranks a holding condition over an unconditional rule of the same specificity', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.create_task', decision: 'deny' },
      { action: 'acme.create_task', when: 'user == "alice"', decision: 'allow' },
    ];
    expect(
      evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({ title: 't' }))).decision,
    ).toBe('allow');
    const bob = { ...actionCall({ title: 't' }), userExternalId: 'bob' };
    expect(evaluatePolicy(policy(rules), createTask, judgeOn(bob)).decision).toBe('deny');
  });

  it('lets deny beat ask beat allow among rules equally specific, whatever their order', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.create_task', decision: 'allow' },
      { action: 'acme.create_task', decision: 'ask' },
    ];
    expect(evaluatePolicy(policy(rules), createTask).decision).toBe('ask');
    expect(evaluatePolicy(policy([...rules].reverse()), createTask).decision).toBe('ask');
    const conditioned: PolicyRule[] = [
      { action: 'acme.create_task', when: 'true', decision: 'allow' },
      { action: 'acme.create_task', when: 'user != ""', decision: 'deny' },
    ];
    expect(
      evaluatePolicy(policy(conditioned), createTask, judgeOn(actionCall({ title: 't' }))).decision,
    ).toBe('deny');
  });

  it('keeps a more specific rule over a less specific one whose condition holds', () => {
    const rules: PolicyRule[] = [
      { app: 'acme', when: 'true', decision: 'deny' },
      { action: 'acme.create_task', decision: 'allow' },
    ];
    expect(evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({}))).decision).toBe(
      'allow',
    );
  });

  it('never loosens on a condition that reads a field the input lacks, and says so', () => {
    // The write would be asked for by the app rule; the allow rule's condition cannot be judged.
    const rules: PolicyRule[] = [
      { app: 'acme', decision: 'ask' },
      { action: 'acme.create_task', when: 'input.amount < 100', decision: 'allow' },
    ];
    const verdict = evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({ title: 't' })));
    expect(verdict).toMatchObject({ decision: 'ask', certain: false });
    expect(verdict.matched).toBe('rule (app acme)');
    expect(verdict.unjudged).toEqual([
      expect.stringMatching(/not applied: its condition could not be judged \(No such key: amount/),
    ]);
  });

  it('counts a stricter rule whose condition cannot be judged as holding', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.create_task', decision: 'allow' },
      { action: 'acme.create_task', when: 'input.amount > 100', decision: 'ask' },
    ];
    const verdict = evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({ title: 't' })));
    expect(verdict.decision).toBe('ask');
    expect(verdict.matched).toMatch(
      /could not be judged .*counted as holding since that is stricter/,
    );
  });

  it('does not let an unjudged conditional ask outrank an unconditional deny', () => {
    // Were the condition held, the ask would win at equal specificity: as it cannot be judged,
    // the deny it might have displaced stands.
    const rules: PolicyRule[] = [
      { action: 'acme.create_task', decision: 'deny' },
      { action: 'acme.create_task', when: 'input.missing', decision: 'ask' },
    ];
    expect(evaluatePolicy(policy(rules), createTask, judgeOn(actionCall({}))).decision).toBe(
      'deny',
    );
  });

  it('treats a condition that throws or is not a bool as unjudged', () => {
    const context = conditionContext(actionCall({ n: 0, s: 'x' }), at);
    expect(judgeCondition('1 / int(input.n) > 0', context)).toEqual({
      error: expect.stringMatching(/division by zero/i) as unknown as string,
    });
    expect(judgeCondition('input.s', context)).toEqual({
      error: 'evaluates to a string, not a bool',
    });
  });

  it('stops a condition that would run for too long, and a backtracking regex', () => {
    const items = Array.from({ length: 20_000 }, (_, i) => i);
    const context = conditionContext(actionCall({ items, title: `${'a'.repeat(40)}b` }), at);
    expect(judgeCondition('input.items.all(x, x in input.items)', context)).toEqual({
      error: 'took longer than 100 ms',
    });
    expect(judgeCondition('input.title.matches("^(a+)+$")', context)).toEqual({
      error: 'took longer than 100 ms',
    });
    // A stopped condition leaves nothing behind: the next one is judged.
    expect(judgeCondition('size(input.items) == 20000', context)).toEqual({ holds: true });
  });

  it('shares one budget among every condition of a call', () => {
    const context = conditionContext(
      actionCall({ items: Array.from({ length: 20_000 }, (_, i) => i) }),
      at,
    );
    const judge = callConditionJudge(actionCall({ items: context.input }), at);
    const slow = 'input.items.items.all(x, x in input.items.items)';
    const outcomes = [1, 2, 3, 4].map((n) =>
      judge({
        action: 'acme.create_task',
        when: `${slow} || ${String(n)} == 0`,
        decision: 'allow',
      }),
    );
    expect(outcomes.at(-1)).toEqual({ error: 'the evaluation budget of the call is spent' });
  });

  it('reads the proxy request with its path decoded, and the time of the call', () => {
    const call = proxyCall('POST', 'repos/o/r/contents/docs/a%20b.md', 'force=true');
    const judge = judgeOn(call);
    const rule = (when: string): PolicyRule & { when: string } => ({
      app: 'acme',
      when,
      decision: 'deny',
    });
    expect(judge(rule('request.path == "/repos/o/r/contents/docs/a b.md"'))).toEqual({
      holds: true,
    });
    expect(judge(rule('request.raw_path.endsWith("/a%20b.md")'))).toEqual({ holds: true });
    expect(judge(rule('request.query.force == "true" && request.method == "POST"'))).toEqual({
      holds: true,
    });
    expect(judge(rule('request.headers["x-trace"] == "abc"'))).toEqual({ holds: true });
    expect(judge(rule('now.getHours() >= 9 && now.getHours() < 17'))).toEqual({ holds: true });
    expect(judge(rule('now.getDayOfWeek() == 3'))).toEqual({ holds: true });
    // The other kind's variable is there but empty: a condition about it is unjudged, not false.
    expect(judge(rule('input.amount > 1'))).toEqual({
      error: expect.stringMatching(/No such key/) as unknown as string,
    });
  });

  it('bounds a proxy call by an action rule whose condition it cannot judge', () => {
    const rules: PolicyRule[] = [
      { app: 'acme', decision: 'allow' },
      { action: 'acme.create_task', when: 'input.title.startsWith("x")', decision: 'deny' },
    ];
    const target: CallTarget = {
      kind: 'proxy',
      app: 'acme',
      scope: 'write',
      actions: [{ action: 'acme.create_task', scope: 'write' }],
    };
    const verdict = evaluatePolicy(policy(rules), target, judgeOn(proxyCall('POST', 'tasks')));
    expect(verdict.decision).toBe('deny');
    expect(verdict.matched).toMatch(/applied to the proxy at scope write$/);
  });
});

describe('checking conditions as a policy is written', () => {
  it('names the position of a syntax or type error', () => {
    expect(checkCondition('input.amount > ')).toEqual({
      ok: false,
      message: 'Unexpected token: EOF',
      line: 1,
      column: 16,
    });
    expect(checkCondition('user == "a" ||\n  user + 1 == 2')).toMatchObject({ ok: false, line: 2 });
    expect(checkCondition('nosuch == 1')).toMatchObject({
      ok: false,
      message: 'Unknown variable: nosuch',
    });
    expect(checkCondition('user')).toEqual({
      ok: false,
      message: 'must be a bool, is a string',
      line: 1,
      column: 1,
    });
    expect(checkCondition('input.amount > 100 && request.method == "POST"')).toEqual({ ok: true });
  });

  it('refuses a huge or deeply nested expression', () => {
    expect(checkCondition(`${'true && '.repeat(300)}true`)).toMatchObject({ ok: false });
    expect(checkCondition('x'.repeat(MAX_CONDITION_LENGTH + 1))).toMatchObject({
      ok: false,
      message: `longer than ${String(MAX_CONDITION_LENGTH)} characters`,
    });
    expect(checkCondition(`${'('.repeat(40)}true${')'.repeat(40)}`)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/maxDepth/) as unknown as string,
    });
  });
});
