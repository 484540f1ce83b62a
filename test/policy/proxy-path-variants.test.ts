import { beforeAll, describe, expect, it } from '@jest/globals';
import type { ApiRequestRecord } from '../../infra/demo-app/last-request.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { rawRequest } from '../support/raw-request.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A path condition on the proxy holds whatever spelling of the path the agent chooses. The demo
 * app, like Express by default, routes `/TASKS`, `/Tasks` and `/tasks/` to `POST /tasks`; other
 * apps also decode escapes, merge slashes, drop `;params` or trailing dots. A rule that denies or
 * holds writes to `/tasks` must stop every such spelling before the app sees a byte of it.
 */
let stack: CallStack;
/** Agent `pathwise`, governed by policy `pathwise`, which this file rewrites. */
let agent: TestKey;
let user: SeededConnection;

const USER = 'u_paths';
const TASK_WRITES = 'request.method == "POST" && request.path.startsWith("/tasks")';

async function setPolicy(rules: object[], write = 'allow'): Promise<void> {
  const answer = await stack.request(stack.key, 'PUT', '/v1/policies/pathwise', {
    body: {
      name: 'Pathwise',
      agents: ['pathwise'],
      defaults: { read: 'allow', write, destructive: 'deny' },
      rules,
    },
  });
  if (answer.status !== 200) throw new Error(`policy: ${JSON.stringify(answer.body)}`);
}

let sent = 0;

/**
 * POST through the proxy with the target exactly as written (fetch would tidy it first). Each
 * title is new: the same request again would be the same call, answered as it was.
 */
async function postThroughProxy(path: string): Promise<{
  status: number;
  body: Record<string, unknown>;
}> {
  sent += 1;
  const body = JSON.stringify({ title: `via ${path} #${String(sent)}` });
  return rawRequest(stack.api.url, 'POST', `/v1/proxy/acme/${path}`, {
    headers: {
      authorization: `Bearer ${agent.key}`,
      'service-user': USER,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
}

async function taskTitles(): Promise<string[]> {
  const response = await fetch(`${stack.acme.demo.url}/tasks`, {
    headers: { authorization: `Bearer ${user.accessToken}` },
  });
  expect(response.status).toBe(200);
  const { tasks } = (await response.json()) as { tasks: { title: string }[] };
  return tasks.map((task) => task.title);
}

const apiRequests = (): number => stack.acme.demo.stats().apiRequests;

/** What the demo app last received on its resource API. */
async function lastAppRequest(): Promise<ApiRequestRecord | null> {
  const response = await fetch(`${stack.acme.demo.url}/__admin/last-request`);
  return (await response.json()) as ApiRequestRecord | null;
}

async function databaseNow(): Promise<Date> {
  const [row] = await stack.db.sql<{ now: Date }[]>`select clock_timestamp() as now`;
  if (!row) throw new Error('no time from the database');
  return row.now;
}

interface Refusal {
  path: string;
  status: number;
  code: unknown;
  reached: number;
}

/** The call's answer, and how many requests the app received while it was made. */
async function attempt(path: string): Promise<Refusal> {
  const before = apiRequests();
  const answer = await postThroughProxy(path);
  const error = answer.body.error as { code?: unknown } | undefined;
  return { path, status: answer.status, code: error?.code, reached: apiRequests() - before };
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  user = await stack.connect(USER);
  agent = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'pathwise' });
});

/** Spellings the demo app itself routes to `POST /tasks`: each a proven way around a path rule. */
const SAME_TO_THE_APP = ['TASKS', 'Tasks', 'tAsKs', 'TASKS/', 'tasks/', 'Tasks?x=1'];

/**
 * Spellings an app may take for `/tasks` or a path below it (by case, encoding, merged slashes,
 * dropped `;params` or trailing dots, Unicode case folding, a double decoding), and query tricks:
 * a condition about `/tasks` must hold on each as on `/tasks`.
 */
const JUDGED = [
  'tasks',
  ...SAME_TO_THE_APP,
  'TASKS//',
  '%74asks',
  '%74%61%73%6B%73',
  '%54ASKS',
  'tas%6bs',
  '%2574asks',
  '/tasks',
  '//tasks',
  'tasks//',
  'tasks//x',
  'tasks.',
  'TASKS.',
  'tasks%2e',
  'tasks./',
  'tasks;x',
  'tasks;',
  'TASKS;jsessionid=1',
  'tasks;x/',
  'tasks/...',
  'tasks/.a',
  'tasks/a.',
  'tasks/a%2e',
  'tasks/%252e',
  'ta%C5%BFks',
  'TA%C5%BFKS',
  'tas%E2%84%AAs',
  'tasks?x=1',
  'TASKS?a=/tasks',
  'tasks%3Fx=1',
  'tasks/a?b',
  '%74asks?',
];

/**
 * Refused before policy with 400: apps disagree on what they mean (an encoded slash or backslash
 * splits a segment in one app and not in another), a URL parser on the way would rewrite them
 * (dot segments, backslashes, a fragment), or they are no path at all (NUL and other control
 * characters, malformed or overlong escapes).
 */
const REFUSED_AS_SENT = [
  '%2Ftasks',
  'tasks%2F',
  'tasks%2f',
  'x%2F..%2Ftasks',
  'tasks/..%2Fx',
  '%5Ctasks',
  'tasks%5c',
  'tasks%00',
  'tasks%0A',
  'tasks%7F',
  'tasks%zz',
  'tasks%',
  'tasks%4',
  '%C0%AFtasks',
  'tasks%E2%82',
  './tasks',
  'x/../tasks',
  '%2e/tasks',
  'x/%2E%2e/tasks',
  'x/.%2e/tasks',
  'tasks/.',
  'tasks/..',
  'tasks/%2e%2E',
  'tasks/.%2e/x',
  'tasks\\..\\tasks',
  '\\tasks',
  'tasks/a\\b',
  'tasks/\\..',
  'tasks/a%2F..',
  'tasks/..%2f',
  'tasks/%2e',
  'tasks/a/..',
  'tasks/../me',
  'tasks/%2E%2e/me',
  'tasks/.%2e/me',
  './me',
  'tasks#x',
  'tasks/a#b',
];

describe('a path condition on the proxy, whatever the spelling of the path', () => {
  it('denies POST /TASKS where the rule denies POST /tasks, and the app gets nothing', async () => {
    await setPolicy([{ action: 'acme.proxy', when: TASK_WRITES, decision: 'deny' }]);
    expect(await attempt('TASKS')).toEqual({
      path: 'TASKS',
      status: 403,
      code: 'denied_by_policy',
      reached: 0,
    });
    expect(await lastAppRequest()).toBeNull();
    expect(await taskTitles()).toEqual([]);
    const rows = await stack.db.sql<{ decision: string; reason: string }[]>`
      select decision, reason from audit_events
      where agent_id = 'pathwise' and request->>'path' = 'TASKS'`;
    expect(rows).toEqual([
      {
        decision: 'denied',
        reason: expect.stringContaining('"/tasks"') as unknown as string,
      },
    ]);
  });

  it('is gone around by each of these spellings when no rule stops it (the demo app routes them to POST /tasks)', async () => {
    await setPolicy([]);
    const before = await taskTitles();
    for (const path of SAME_TO_THE_APP) {
      const answer = await postThroughProxy(path);
      expect([path, answer.status]).toEqual([path, 201]);
    }
    const created = (await taskTitles()).slice(before.length);
    expect(created.map((title) => title.replace(/ #\d+$/, ''))).toEqual(
      SAME_TO_THE_APP.map((path) => `via ${path}`),
    );
  });

  it.each([
    ['deny', 'denied_by_policy', { action: 'acme.proxy', when: TASK_WRITES, decision: 'deny' }],
    [
      'ask',
      'approval_required',
      { app: 'acme', scope: 'write', when: TASK_WRITES, decision: 'ask' },
    ],
  ] as const)(
    'a %s condition stops every spelling before the app (%s), or it is refused as sent',
    async (_decision, code, rule) => {
      await setPolicy([rule]);
      const since = await databaseNow();
      const tasksBefore = await taskTitles();
      const lastBefore = await lastAppRequest();
      const outcomes: Refusal[] = [];
      for (const path of JUDGED) outcomes.push(await attempt(path));
      for (const path of REFUSED_AS_SENT) outcomes.push(await attempt(path));
      expect(outcomes).toEqual([
        ...JUDGED.map((path) => ({ path, status: 403, code, reached: 0 })),
        ...REFUSED_AS_SENT.map((path) => ({
          path,
          status: 400,
          code: 'invalid_request',
          reached: 0,
        })),
      ]);
      expect(await lastAppRequest()).toEqual(lastBefore);
      expect(await taskTitles()).toEqual(tasksBefore);
      const rows = await stack.db.sql<{ decision: string }[]>`
        select distinct decision from audit_events
        where agent_id = 'pathwise' and time >= ${since}`;
      expect(rows.map((row) => row.decision)).not.toContain('allowed');
    },
  );

  it('denies every case of a path its condition names in mixed case', async () => {
    await setPolicy([
      {
        action: 'acme.proxy',
        when: 'request.method == "POST" && request.path.startsWith("/Tasks")',
        decision: 'deny',
      },
    ]);
    const outcomes: Refusal[] = [];
    for (const path of ['tasks', 'TASKS', 'Tasks', 'tasks/']) outcomes.push(await attempt(path));
    expect(outcomes).toEqual(
      ['tasks', 'TASKS', 'Tasks', 'tasks/'].map((path) => ({
        path,
        status: 403,
        code: 'denied_by_policy',
        reached: 0,
      })),
    );
  });

  it('lets an allow condition open only the spelling it names, never a variant of it', async () => {
    await setPolicy(
      [
        {
          action: 'acme.proxy',
          when: 'request.method == "POST" && request.path == "/tasks"',
          decision: 'allow',
        },
      ],
      'ask',
    );
    // The path as the app reads it: `%74asks` is `/tasks`, sent to the app as `/tasks`.
    for (const path of ['tasks', '%74asks', 'tas%6Bs']) {
      const answer = await postThroughProxy(path);
      expect([path, answer.status]).toEqual([path, 201]);
      expect((await lastAppRequest())?.path).toBe('/tasks');
    }
    for (const path of [
      'TASKS',
      'Tasks',
      'tasks/',
      'tasks;x',
      'tasks.',
      'ta%C5%BFks',
      '%2574asks',
    ]) {
      expect(await attempt(path)).toEqual({
        path,
        status: 403,
        code: 'approval_required',
        reached: 0,
      });
    }
  });
});

describe('the path the app receives', () => {
  it('is the one policy judged: escapes of plain characters decoded, slashes merged, case kept', async () => {
    await setPolicy([]);
    const since = await databaseNow();
    for (const [sent, received] of [
      ['%74asks', '/tasks'],
      ['//tasks', '/tasks'],
      ['%74%61%73%6b%73/', '/tasks/'],
      ['TASKS', '/TASKS'],
      ['tasks/t%3fx', '/tasks/t%3Fx'],
    ] as const) {
      const answer = await postThroughProxy(sent);
      expect([sent, answer.status > 0]).toEqual([sent, true]);
      expect([sent, (await lastAppRequest())?.path]).toEqual([sent, received]);
    }
    const rows = await stack.db.sql<{ path: string }[]>`
      select request->>'path' as path from audit_events
      where agent_id = 'pathwise' and time >= ${since}`;
    expect(rows.map((row) => row.path).sort()).toEqual(
      ['tasks', 'tasks', 'tasks/', 'TASKS', 'tasks/t%3Fx'].sort(),
    );
  });
});
