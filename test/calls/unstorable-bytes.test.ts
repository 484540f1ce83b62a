import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { v7 as uuidv7 } from 'uuid';
import { openApproval } from '../../activities/db/approvals.js';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { HOSTILE_TITLE_SUFFIX } from '../../infra/demo-app/faults.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * An app may answer with characters that JSON carries but Postgres text and
 * jsonb cannot store (U+0000, lone UTF-16 surrogates). The caller still gets the app's answer,
 * every call keeps exactly one audit row, and the app is asked exactly once.
 */
let stack: CallStack;

const USER = 'u_bytes';
/** What the demo app's `nul_and_surrogate` fault does to a title (infra/demo-app/faults.ts). */
const hostile = (title: string) => `${title}${HOSTILE_TITLE_SUFFIX}`;
/** How audit stores such a string: marked, with the unstorable characters JSON-escaped. */
const stored = (title: string) => `$unstorable:${title} \\u0000 \\ud83d`;

interface AuditedEvent {
  decision: string;
  action: string;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
}

function apiRequests(): number {
  return stack.acme.demo.stats().apiRequests;
}

/** The one audit event of the HTTP request that got `answer`, through the audit API. */
async function auditOf(answer: Answer): Promise<AuditedEvent> {
  const traceId = answer.headers.get('x-trace-id') ?? '';
  const rows = await stack.db.sql<{ id: string }[]>`
    select id from audit_events where trace_id = ${traceId}`;
  expect(rows).toHaveLength(1);
  const event = await stack.request(stack.key, 'GET', `/v1/audit/${rows[0]?.id ?? ''}`);
  expect(event.status).toBe(200);
  return event.body as unknown as AuditedEvent;
}

/** Runs `call` and checks that it reached the app exactly once. */
async function once(call: () => Promise<Answer>): Promise<Answer> {
  const before = apiRequests();
  const answer = await call();
  expect(apiRequests() - before).toBe(1);
  return answer;
}

function proxy(method: string, path: string, body?: unknown): Promise<Answer> {
  return stack.request(stack.key, method, `/v1/proxy/acme/${path}`, {
    headers: { 'service-user': USER },
    ...(body === undefined ? {} : { body }),
  });
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect(USER);
  // Writes run at once: this file is about what comes back, not about approvals.
  await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'deny' });
});

afterEach(() => {
  stack.acme.demo.faults.reset();
});

describe("an app's answer carrying a NUL and a lone surrogate", () => {
  it("a write: the caller gets the app's answer as JSON, audit keeps it in the stored form", async () => {
    stack.acme.demo.faults.set({ mode: 'nul_and_surrogate' });
    const answer = await once(() =>
      stack.run('acme.create_task', { user: USER, input: { title: 'Write' } }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      data: expect.objectContaining({ id: expect.any(String), title: hostile('Write') }),
    });
    const event = await auditOf(answer);
    expect(event.decision).toBe('allowed');
    expect(event.response).toMatchObject({
      ok: true,
      upstream_status: 201,
      data: { title: stored('Write') },
    });
  });

  it('a read: every later list of the user is answered, and audited, too', async () => {
    stack.acme.demo.faults.set({ mode: 'nul_and_surrogate' });
    for (let i = 0; i < 2; i += 1) {
      const answer = await once(() => stack.run('acme.list_tasks', { user: USER }));
      expect(answer.status).toBe(200);
      const data = answer.body.data as { tasks: { title: string }[] };
      expect(data.tasks.map((task) => task.title)).toContain(hostile('Write'));
      const event = await auditOf(answer);
      expect(event.decision).toBe('allowed');
      const response = event.response as { data: { tasks: { title: string }[] } };
      expect(response.data.tasks.map((task) => task.title)).toContain(stored('Write'));
    }
  });

  it("the proxy passes the app's bytes on, and audits the call once", async () => {
    stack.acme.demo.faults.set({ mode: 'nul_and_surrogate' });
    const listed = await once(() => proxy('GET', 'tasks'));
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('\\u0000 \\ud83d');
    expect((await auditOf(listed)).response).toMatchObject({ status: 200 });

    const created = await once(() => proxy('POST', 'tasks', { title: 'Proxied' }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: hostile('Proxied') });
    const event = await auditOf(created);
    expect(event).toMatchObject({ decision: 'allowed', action: 'acme.proxy' });
    expect(event.response).toMatchObject({ status: 201 });
  });

  it('once the app answers plainly again, the same calls are plain', async () => {
    const answer = await once(() => stack.run('acme.list_tasks', { user: USER }));
    expect(answer.status).toBe(200);
    const titles = (answer.body.data as { tasks: { title: string }[] }).tasks.map((t) => t.title);
    expect(titles.sort()).toEqual(['Proxied', 'Write']);
  });
});

describe('the stored form, on the way into Postgres', () => {
  it('keeps any string an audit row or an approval is given, reversibly and unambiguously', async () => {
    const odd = {
      nul: 'a\u0000b',
      high: 'x\ud83d',
      low: '\udc00y',
      pair: 'ok \u{1F600}',
      // A plain string that happens to look like the stored form is marked too, so that a
      // reader can always tell which strings were changed.
      lookalike: '$unstorable:plain',
      ['key\u0000']: ['\ud800', 1, null, { deep: 'z\u0000' }],
    };
    const [id] = await insertAuditEvents(stack.db.sql, [
      {
        environmentId: stack.environmentId,
        action: 'acme.do\u0000it',
        scope: 'write',
        decision: 'denied',
        reason: 'invalid_request: input.x: \ud83d',
        agentId: 'test-agent',
        via: 'api',
        userExternalId: 'u_\ud83d',
        connectedUserId: null,
        connectionId: null,
        approvalId: null,
        request: odd,
        response: odd,
        traceId: 'trace-unstorable',
        policyId: null,
        policyVersion: null,
      },
    ]);
    const expected = {
      nul: '$unstorable:a\\u0000b',
      high: '$unstorable:x\\ud83d',
      low: '$unstorable:\\udc00y',
      pair: 'ok \u{1F600}',
      lookalike: '$unstorable:$unstorable:plain',
      ['$unstorable:key\\u0000']: [
        '$unstorable:\\ud800',
        1,
        null,
        { deep: '$unstorable:z\\u0000' },
      ],
    };
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${id ?? ''}`);
    expect(event.status).toBe(200);
    expect(event.body).toMatchObject({
      action: '$unstorable:acme.do\\u0000it',
      reason: '$unstorable:invalid_request: input.x: \\ud83d',
      user: '$unstorable:u_\\ud83d',
      request: expected,
      response: expected,
    });
    // The stored form gives back the exact string.
    const restore = (value: string) =>
      JSON.parse(`"${value.slice('$unstorable:'.length)}"`) as string;
    expect(restore(expected.nul)).toBe(odd.nul);
    expect(restore(expected.high)).toBe(odd.high);
    expect(restore(expected.lookalike)).toBe(odd.lookalike);

    const approval = await openApproval(stack.db.sql, {
      environmentId: stack.environmentId,
      fingerprint: `unstorable-${uuidv7()}`,
      workflowId: 'call/test/unstorable',
      action: 'acme.create_task',
      scope: 'write',
      agentId: 'test-agent',
      userExternalId: USER,
      requestedFrom: [],
      request: odd,
      policyId: 'default',
      policyVersion: 1,
      policyRule: 'defaults.write',
      ttlSeconds: 60,
    });
    expect(approval.request).toEqual(expected);
  });
});

describe('a call that reached the app', () => {
  /** A Postgres that refuses audit rows while `audit_outage` has a row; counts its refusals. */
  async function installAuditOutage(): Promise<void> {
    await stack.db.sql.unsafe(`
      create sequence audit_refusals;
      create table audit_outage (since timestamptz not null default now());
      create function refuse_audit() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from audit_outage) then
          perform nextval('audit_refusals');
          raise exception 'audit outage (test)';
        end if;
        return new;
      end $$;
      create trigger refuse_audit before insert on audit_events
        for each row execute function refuse_audit();`);
  }

  async function refusals(): Promise<number> {
    const [row] = await stack.db.sql<{ lastValue: string; isCalled: boolean }[]>`
      select last_value, is_called from audit_refusals`;
    return row?.isCalled ? Number(row.lastValue) : 0;
  }

  it("is answered with the app's answer and audited once, even when audit writes fail for a while", async () => {
    await installAuditOutage();
    await stack.db.sql`insert into audit_outage default values`;
    const before = apiRequests();
    // An object, so that the loop below sees the callback's change.
    const call = { answered: false };
    const pending = stack
      .run('acme.create_task', { user: USER, input: { title: 'Through an outage' } })
      .finally(() => {
        call.answered = true;
      });
    // More failed writes than the workflow's ordinary retries allow (5), then Postgres recovers.
    while (!call.answered && (await refusals()) < 6) await sleep(100);
    await stack.db.sql`delete from audit_outage`;
    const answer = await pending;

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      ok: true,
      data: expect.objectContaining({ title: 'Through an outage' }),
    });
    expect(apiRequests() - before).toBe(1);
    expect(await auditOf(answer)).toMatchObject({ decision: 'allowed' });
  });
});

describe("an app's answer nested deeper than JavaScript can write it", () => {
  // JSON.stringify of so deep a value overflows its stack: the answer is kept as text.
  it('a write is not answered with a retryable 500, and is audited once', async () => {
    stack.acme.demo.faults.set({ mode: 'deep_json' });
    const answer = await once(() =>
      stack.run('acme.create_task', { user: USER, input: { title: 'Deep' } }),
    );
    const error = answer.body.error as { retryable?: boolean } | undefined;
    expect(answer.status).toBeLessThan(500);
    expect(error?.retryable).not.toBe(true);
    expect(await auditOf(answer)).toMatchObject({ decision: 'allowed' });
    expect(answer.body).toMatchObject({ ok: true, data: expect.stringMatching(/^\[\[\[/) });
  });
});
