import { describe, expect, it } from '@jest/globals';
import {
  evaluatePolicy,
  type CallTarget,
  governingPolicy,
  scopeOfMethod,
  type PolicyDocument,
  type PolicyRule,
  type Verdict,
} from '../workflows/policy.js';
import type { CallScope } from '../workflows/catalog/index.js';

function policy(rules: PolicyRule[]): PolicyDocument {
  return {
    id: 'p',
    version: 3,
    agents: ['*'],
    defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
    rules,
    approval: { requested_from: [], ttl_seconds: 60 },
  };
}

const createIssue = {
  kind: 'action',
  action: 'github.create_issue',
  app: 'github',
  scope: 'write',
} as const;

describe('policy evaluation', () => {
  it('falls back to the defaults for the scope', () => {
    expect(evaluatePolicy(policy([]), createIssue)).toEqual({
      decision: 'ask',
      matched: 'defaults.write',
      policyId: 'p',
      policyVersion: 3,
      unjudged: [],
      certain: true,
    });
  });

  it('ranks exact action > action glob > app+scope > app > scope', () => {
    const rules: PolicyRule[] = [
      { scope: 'write', decision: 'deny' },
      { app: 'github', decision: 'ask' },
      { app: 'github', scope: 'write', decision: 'deny' },
      { action: 'github.*', decision: 'ask' },
      { action: 'github.create_issue', decision: 'allow' },
    ];
    expect(evaluatePolicy(policy(rules), createIssue).decision).toBe('allow');
    expect(evaluatePolicy(policy(rules.slice(0, 4)), createIssue)).toMatchObject({
      decision: 'ask',
      matched: 'rule (action github.*)',
    });
    expect(evaluatePolicy(policy(rules.slice(0, 3)), createIssue)).toMatchObject({
      decision: 'deny',
      matched: 'rule (app github, scope write)',
    });
    expect(evaluatePolicy(policy(rules.slice(0, 2)), createIssue).decision).toBe('ask');
    expect(evaluatePolicy(policy(rules.slice(0, 1)), createIssue).decision).toBe('deny');
  });

  it('lets a rule match only when all its conditions do', () => {
    const rules: PolicyRule[] = [
      { action: 'github.create_issue', scope: 'read', decision: 'deny' },
      { app: 'slack', decision: 'deny' },
      { action: 'gith*.list_*', decision: 'deny' },
    ];
    expect(evaluatePolicy(policy(rules), createIssue).matched).toBe('defaults.write');
  });

  it('grades proxy calls by method', () => {
    expect(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map(scopeOfMethod)).toEqual([
      'read',
      'write',
      'write',
      'write',
      'destructive',
    ]);
  });

  it('governs an agent by the policy naming it, else by the * policy', () => {
    const policies = [
      { id: 'all', agents: ['*'] },
      { id: 'billing', agents: ['billing-bot'] },
    ];
    expect(governingPolicy(policies, 'billing-bot')?.id).toBe('billing');
    expect(governingPolicy(policies, 'other')?.id).toBe('all');
    expect(governingPolicy([{ id: 'billing', agents: ['billing-bot'] }], 'other')).toBeNull();
  });
});

describe('the proxy, the action <app>.proxy', () => {
  /** acme's catalog actions as prepare-call lists them. */
  const acmeActions = [
    { action: 'acme.list_tasks', scope: 'read' },
    { action: 'acme.get_task', scope: 'read' },
    { action: 'acme.create_task', scope: 'write' },
    { action: 'acme.update_task', scope: 'write' },
    { action: 'acme.delete_task', scope: 'destructive' },
  ] as const;
  const proxyTo = (app: string, scope: CallScope): CallTarget => ({
    kind: 'proxy',
    app,
    scope,
    actions: app === 'acme' ? acmeActions : [],
  });
  const lenient = { read: 'allow', write: 'allow', destructive: 'allow' } as const;
  const evaluate = (rules: PolicyRule[], app: string, scope: CallScope): Verdict =>
    evaluatePolicy({ ...policy(rules), defaults: lenient }, proxyTo(app, scope));
  const outcome = (verdict: Verdict) => [verdict.decision, verdict.matched];

  it('lets a rule naming <app>.proxy exactly decide, over every action rule', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.delete_task', decision: 'deny' },
      { app: 'acme', decision: 'deny' },
      { action: 'acme.proxy', decision: 'allow' },
    ];
    for (const scope of ['read', 'write', 'destructive'] as const) {
      expect(outcome(evaluate(rules, 'acme', scope))).toEqual([
        'allow',
        'rule (action acme.proxy)',
      ]);
    }
  });

  it('lets an exact <app>.proxy rule with a scope decide that scope only', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.proxy', scope: 'destructive', decision: 'allow' },
      { action: 'acme.*', decision: 'ask' },
    ];
    expect(outcome(evaluate(rules, 'acme', 'destructive'))).toEqual([
      'allow',
      'rule (action acme.proxy, scope destructive)',
    ]);
    expect(outcome(evaluate(rules, 'acme', 'write'))).toEqual(['ask', 'rule (action acme.*)']);
  });

  it('matches <app>.proxy with an action glob, over app and scope rules', () => {
    const rules: PolicyRule[] = [
      { app: 'acme', scope: 'read', decision: 'allow' },
      { action: 'acme.*', decision: 'deny' },
      { action: '*.proxy', scope: 'write', decision: 'ask' },
    ];
    expect(outcome(evaluate(rules, 'acme', 'read'))).toEqual(['deny', 'rule (action acme.*)']);
    expect(outcome(evaluate(rules, 'github', 'write'))).toEqual([
      'ask',
      'rule (action *.proxy, scope write)',
    ]);
    expect(outcome(evaluate(rules, 'github', 'read'))).toEqual(['allow', 'defaults.read']);
  });

  it("is denied at a scope where one of the app's actions is denied by an action rule", () => {
    const rules: PolicyRule[] = [
      { app: 'acme', decision: 'allow' },
      { action: 'acme.delete_task', decision: 'deny' },
    ];
    expect(evaluate(rules, 'acme', 'destructive')).toEqual({
      decision: 'deny',
      matched: 'rule (action acme.delete_task) applied to the proxy at scope destructive',
      policyId: 'p',
      policyVersion: 3,
      unjudged: [],
      certain: true,
    });
  });

  it('asks where an action rule of that scope asks, and takes the strictest of several', () => {
    const ask: PolicyRule[] = [{ action: 'acme.update_task', decision: 'ask' }];
    expect(outcome(evaluate(ask, 'acme', 'write'))).toEqual([
      'ask',
      'rule (action acme.update_task) applied to the proxy at scope write',
    ]);
    const several: PolicyRule[] = [
      { action: 'acme.create_task', decision: 'ask' },
      { action: 'acme.update*', decision: 'deny' },
    ];
    expect(outcome(evaluate(several, 'acme', 'write'))).toEqual([
      'deny',
      'rule (action acme.update*) applied to the proxy at scope write',
    ]);
  });

  it('is not bounded by action rules of another scope', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.delete_task', decision: 'deny' },
      { action: 'acme.create_task', decision: 'ask' },
    ];
    expect(outcome(evaluate(rules, 'acme', 'read'))).toEqual(['allow', 'defaults.read']);
    expect(evaluate(rules, 'acme', 'write').decision).toBe('ask');
    expect(evaluate(rules, 'acme', 'destructive').decision).toBe('deny');
  });

  it('is not loosened by a more lenient action rule, nor by a glob that matches it too', () => {
    const lenientAction: PolicyRule[] = [
      { app: 'acme', scope: 'destructive', decision: 'ask' },
      { action: 'acme.delete_task', decision: 'allow' },
    ];
    expect(outcome(evaluate(lenientAction, 'acme', 'destructive'))).toEqual([
      'ask',
      'rule (app acme, scope destructive)',
    ]);
    // `*` names no action in particular: it must not reopen through the proxy what is denied.
    const glob: PolicyRule[] = [
      { action: '*', decision: 'allow' },
      { action: 'acme.delete_task', decision: 'deny' },
    ];
    expect(outcome(evaluate(glob, 'acme', 'destructive'))).toEqual([
      'deny',
      'rule (action acme.delete_task) applied to the proxy at scope destructive',
    ]);
    expect(outcome(evaluate(glob, 'acme', 'write'))).toEqual(['allow', 'rule (action *)']);
  });

  it("leaves another app's proxy alone", () => {
    const rules: PolicyRule[] = [
      { action: 'acme.delete_task', decision: 'deny' },
      { action: 'acme.*', decision: 'ask' },
    ];
    expect(outcome(evaluate(rules, 'github', 'destructive'))).toEqual([
      'allow',
      'defaults.destructive',
    ]);
    // Nor do a proxy's bounds reach the actions themselves.
    const deleteTask = { kind: 'action', action: 'acme.delete_task', app: 'acme' } as const;
    const proxyRule: PolicyRule[] = [{ action: 'acme.proxy', decision: 'deny' }];
    expect(evaluatePolicy(policy(proxyRule), { ...deleteTask, scope: 'destructive' }).matched).toBe(
      'defaults.destructive',
    );
  });
});
