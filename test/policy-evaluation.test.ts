import { describe, expect, it } from '@jest/globals';
import {
  evaluatePolicy,
  governingPolicy,
  scopeOfMethod,
  type PolicyDocument,
  type PolicyRule,
} from '../workflows/policy.js';

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

describe('policy evaluation (DESIGN.md §4)', () => {
  it('falls back to the defaults for the scope', () => {
    expect(evaluatePolicy(policy([]), createIssue)).toEqual({
      decision: 'ask',
      matched: 'defaults.write',
      policyId: 'p',
      policyVersion: 3,
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

  it('lets proxy calls match app and scope rules only', () => {
    const rules: PolicyRule[] = [
      { action: 'github.*', decision: 'deny' },
      { app: 'github', scope: 'destructive', decision: 'ask' },
    ];
    expect(
      evaluatePolicy(policy(rules), { kind: 'proxy', app: 'github', scope: 'read' }).decision,
    ).toBe('allow');
    expect(
      evaluatePolicy(policy(rules), { kind: 'proxy', app: 'github', scope: 'destructive' })
        .decision,
    ).toBe('ask');
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
