import { describe, expect, it } from '@jest/globals';
import { canonicalProxyPath } from '../../api/calls/proxy-path.js';
import {
  callConditionJudge,
  conditionContext,
  judgeConditionUnbudgeted,
} from '../../activities/policy/conditions.js';
import type { CallRequest } from '../../workflows/call-types.js';
import {
  evaluatePolicy,
  type CallTarget,
  type Decision,
  type PolicyDocument,
  type PolicyRule,
} from '../../workflows/policy.js';

/**
 * A condition about the proxy's path is judged on every reading an app may make of the path
 * (its case, escapes, slashes, `;params`, trailing dots and slash), and a deny or ask that holds
 * on any of them applies; an allow applies only where it holds on all of them.
 */

function policy(rules: PolicyRule[], write: Decision): PolicyDocument {
  return {
    id: 'p',
    version: 1,
    agents: ['*'],
    defaults: { read: 'allow', write, destructive: 'deny' },
    rules,
    approval: { requested_from: [], ttl_seconds: 60 },
  };
}

const proxyTarget: CallTarget = { kind: 'proxy', app: 'acme', scope: 'write', actions: [] };

/** A POST through the proxy to `sent` (below `/v1/proxy/acme/`), as the API would start it. */
function postTo(sent: string): CallRequest {
  const queryAt = sent.indexOf('?');
  const read = canonicalProxyPath(queryAt === -1 ? sent : sent.slice(0, queryAt));
  if (!('path' in read)) throw new Error(`${sent} is refused: ${read.problem}`);
  return {
    environmentId: 'e',
    environmentName: 'dev',
    agentId: 'pathwise',
    userExternalId: 'alice',
    via: 'api',
    fingerprint: 'f',
    retryWindowSeconds: 60,
    target: {
      kind: 'proxy',
      app: 'acme',
      scope: 'write',
      method: 'POST',
      path: read.path,
      query: queryAt === -1 ? '' : sent.slice(queryAt + 1),
      headers: {},
      bodyBase64: null,
    },
  };
}

const at = new Date('2026-11-25T10:30:00Z');

function decide(rules: PolicyRule[], write: Decision, sent: string): Decision {
  return evaluatePolicy(policy(rules, write), proxyTarget, callConditionJudge(postTo(sent), at))
    .decision;
}

/** Spellings of `/tasks` itself that an app may route as `/tasks`. */
const TASKS_ITSELF = [
  'tasks',
  'TASKS',
  'Tasks',
  'tAsKs',
  'TASKS/',
  'tasks/',
  'TASKS//',
  '%74asks',
  '%74%61%73%6B%73',
  '%54ASKS',
  'tas%6bs',
  '%2574asks',
  '%2554ASKS',
  '/tasks',
  '//tasks',
  'tasks//',
  'tasks.',
  'TASKS.',
  'tasks%2e',
  'tasks./',
  'tasks;x',
  'tasks;',
  'TASKS;jsessionid=1',
  'tasks;x/',
  'x/%252e%252e/tasks',
  'ta%C5%BFks',
  'TA%C5%BFKS',
  'tas%E2%84%AAs',
  'tasks?x=1',
  'TASKS?a=/tasks',
  '%74asks?',
];

/** Spellings of paths below `/tasks`. */
const BELOW_TASKS = [
  'tasks//x',
  'tasks/...',
  'tasks/a%2e',
  'tasks/%252e',
  'tasks%3Fx=1',
  'tasks/a?b',
];

const MAIN_REF = 'repos/o/r/git/refs/heads/main';

describe('a deny or ask condition about the path', () => {
  const conditions = [
    'request.path.startsWith("/tasks")',
    'request.path == "/tasks"',
    'request.path in ["/tasks", "/me"]',
    'request.path.matches("^/tasks$")',
    'request.raw_path == "/tasks"',
    'request.path.endsWith("/tasks") && request.method == "POST"',
  ];

  it.each(conditions.flatMap((when) => TASKS_ITSELF.map((sent) => [when, sent])))(
    '%s holds on %j, for deny and ask alike',
    (when, sent) => {
      for (const decision of ['deny', 'ask'] as const) {
        const rules: PolicyRule[] = [{ action: 'acme.proxy', when, decision }];
        expect([sent, decide(rules, 'allow', sent)]).toEqual([sent, decision]);
      }
    },
  );

  it.each(BELOW_TASKS)('a prefix condition holds on %j', (sent) => {
    const rules: PolicyRule[] = [
      { app: 'acme', when: 'request.path.startsWith("/tasks")', decision: 'deny' },
    ];
    expect(decide(rules, 'allow', sent)).toBe('deny');
  });

  it.each([
    MAIN_REF,
    `${MAIN_REF}/`,
    'repos/o/r/git/refs/heads/MAIN',
    'repos/o/r/git/refs/heads/Main',
    'repos/o/r/git/refs/heads/main.',
    'repos/o/r/git/refs/heads/main;x',
    'repos/o/r/git/refs/heads/m%61in',
    'repos/o/r/git/refs/heads/m%2561in',
    'repos//o/r/git/refs/heads//main',
  ])('the README guard on pushes to main holds on %j', (sent) => {
    const rules: PolicyRule[] = [
      {
        action: 'acme.proxy',
        when: 'request.method == "POST" && request.path.endsWith("/git/refs/heads/main")',
        decision: 'deny',
      },
    ];
    expect(decide(rules, 'allow', sent)).toBe('deny');
  });

  it('says why it applied: the outcome depends on how the app reads the path', () => {
    const verdict = evaluatePolicy(
      policy(
        [{ action: 'acme.proxy', when: 'request.path.startsWith("/tasks")', decision: 'deny' }],
        'allow',
      ),
      proxyTarget,
      callConditionJudge(postTo('TASKS'), at),
    );
    expect(verdict.decision).toBe('deny');
    expect(verdict.matched).toMatch(/"\/tasks"/);
    expect(verdict.matched).toMatch(/"\/TASKS"/);
  });

  it('is judged the same by the simulation, which runs conditions without a budget of their own', () => {
    const context = conditionContext(postTo('TASKS'), at);
    expect(judgeConditionUnbudgeted('request.path.startsWith("/tasks")', context)).toEqual({
      error: expect.stringMatching(
        /"\/tasks" read ignoring case and not on "\/TASKS" as sent/,
      ) as unknown as string,
    });
    expect(judgeConditionUnbudgeted('request.method == "POST"', context)).toEqual({
      holds: true,
    });
  });

  it.each([
    ['request.path.startsWith("/repos/MyOrg/")', 'repos/myorg/secret'],
    ['request.path.startsWith("/repos/MyOrg/")', 'repos/MYORG/secret'],
    ['request.path.startsWith("/TASKS")', 'tasks'],
    ['request.path == "/Tasks"', 'tasks/'],
    ['request.path.matches("^/Tasks$")', 'tasks'],
    ['request.path.matches("^/[T]asks$")', 'TASKS'],
    ['request.path in ["/Tasks"]', 'TASKS;x'],
    ['request.raw_path.endsWith("/T%3Ax")', 'tasks/t%3ax'],
  ])('written in another case, %s still holds on %j', (when, sent) => {
    const rules: PolicyRule[] = [{ action: 'acme.proxy', when, decision: 'deny' }];
    expect(decide(rules, 'allow', sent)).toBe('deny');
  });
});

describe('an allow condition about the path', () => {
  const open: PolicyRule[] = [
    { action: 'acme.proxy', when: 'request.path == "/tasks"', decision: 'allow' },
  ];

  it('still opens the path it names, however its plain characters are escaped', () => {
    for (const sent of ['tasks', '%74asks', 'tas%6Bs', 'tasks?x=1']) {
      expect([sent, decide(open, 'ask', sent)]).toEqual([sent, 'allow']);
    }
  });

  it('never opens a spelling the app may read otherwise', () => {
    // The same canonical path as `/tasks`: what is judged and sent is `/tasks` itself.
    const same = ['tasks', '%74asks', '%74%61%73%6B%73', 'tas%6bs', '/tasks', '//tasks'];
    const others = TASKS_ITSELF.filter((sent) => !same.includes(sent.replace(/\?.*$/, '')));
    for (const sent of others) {
      expect([sent, decide(open, 'ask', sent)]).toEqual([sent, 'ask']);
      expect([sent, decide(open, 'deny', sent)]).toEqual([sent, 'deny']);
    }
  });

  it('is never looser than on the path as sent: a rule that does not read the path is unaffected', () => {
    const byMethod: PolicyRule[] = [
      { action: 'acme.proxy', when: 'request.method == "POST"', decision: 'allow' },
    ];
    for (const sent of TASKS_ITSELF) {
      const verdict = evaluatePolicy(
        policy(byMethod, 'deny'),
        proxyTarget,
        callConditionJudge(postTo(sent), at),
      );
      expect([sent, verdict.decision, verdict.certain]).toEqual([sent, 'allow', true]);
    }
  });

  it('opens a path written in mixed case when the path is sent in that case', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.proxy', when: 'request.path.startsWith("/repos/MyOrg/")', decision: 'allow' },
    ];
    const verdict = evaluatePolicy(
      policy(rules, 'ask'),
      proxyTarget,
      callConditionJudge(postTo('repos/MyOrg/x/issues'), at),
    );
    expect(verdict).toMatchObject({ decision: 'allow', certain: true });
    // Another case of it is the same path to a case-insensitive app, and another path to the
    // others: the allow does not stretch to it.
    expect(decide(rules, 'ask', 'repos/myorg/x/issues')).toBe('ask');
  });

  it('keeps the escapes of a pattern as written when reading it ignoring case', () => {
    const rules: PolicyRule[] = [
      { action: 'acme.proxy', when: 'request.path.matches("^/tasks/\\\\D+$")', decision: 'allow' },
    ];
    expect(decide(rules, 'ask', 'tasks/abc')).toBe('allow');
    expect(decide(rules, 'ask', 'tasks/123')).toBe('ask');
  });

  it('beats a less specific deny only where it holds on every reading', () => {
    const rules: PolicyRule[] = [
      { app: 'acme', decision: 'deny' },
      { action: 'acme.proxy', when: 'request.path.startsWith("/tasks")', decision: 'allow' },
    ];
    expect(decide(rules, 'allow', 'tasks')).toBe('allow');
    expect(decide(rules, 'allow', 'tasks/x')).toBe('allow');
    expect(decide(rules, 'allow', 'TASKS')).toBe('deny');
    expect(decide(rules, 'allow', '%2574asks')).toBe('deny');
  });

  it('never lets an ask with a condition beat an unconditioned deny it would otherwise lose to', () => {
    // At equal specificity a rule whose condition holds beats one without: judging the ask on
    // another reading must not make it win where, on the path as sent, the deny decides.
    const rules: PolicyRule[] = [
      { action: 'acme.proxy', decision: 'deny' },
      { action: 'acme.proxy', when: 'request.path == "/tasks"', decision: 'ask' },
    ];
    expect(decide(rules, 'allow', 'TASKS')).toBe('deny');
    expect(decide(rules, 'allow', 'tasks')).toBe('ask');
  });
});
