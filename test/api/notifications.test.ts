// The approval notifications' configuration through the management API, on a real API and
// Postgres: channels (an SMTP relay, a Slack app, Teams), routes and opt-outs; secrets write-only
// (never in an answer, a log line, an audit event or a column in clear); refusals in the error
// envelope; scopes; environments kept apart; and, with NOTIFY_ALLOW_PRIVATE off as in production,
// relays, webhooks and Slack's API address refused on loopback and private addresses.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
/** NOTIFY_ALLOW_PRIVATE=true: local stand-ins may be named (development and tests). */
let api: TestApi;
/** NOTIFY_ALLOW_PRIVATE unset, as in production; the same database. */
let strict: TestApi;
let admin: TestKey;
/** What agents call with: no notifications scope. */
let agent: TestKey;
let readOnly: TestKey;
let reader: TestKey;
let otherEnv: TestKey;

const started = stopsAfterAll();

const PASSWORD = 'relay-password-d2b1c0ffee';
const BOT_TOKEN = 'xoxb-1111-2222-secretbottoken';
const SIGNING_SECRET = '8f14e45fceea167a5a36dedd4bea2543';
const TEAMS_URL =
  'https://prod-42.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=S3cr3tSignatureThatAuthorisesPosting';
const SECRETS = [PASSWORD, BOT_TOKEN, SIGNING_SECRET, TEAMS_URL, 'S3cr3tSignature'];

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(
    await startTestApi(testConfig(db.url, { NOTIFY_ALLOW_PRIVATE: 'true' }), db.sql),
  );
  strict = started.add(await startTestApi(testConfig(db.url), db.sql, { temporal: api.temporal }));
  admin = await createTestKey(db.sql, { env: 'notify', access: 'full', name: 'ops console' });
  agent = await createTestKey(db.sql, { env: 'notify', access: 'standard', agentId: 'bot' });
  readOnly = await createTestKey(db.sql, { env: 'notify', access: 'read_only' });
  reader = await createTestKey(db.sql, {
    env: 'notify',
    access: 'full',
    scopes: ['notifications:read'],
  });
  otherEnv = await createTestKey(db.sql, { env: 'notify-other', access: 'full' });
});

interface Answer {
  status: number;
  body: {
    data?: unknown;
    error?: {
      code: string;
      retryable: boolean;
      message: string;
      issues?: { path: string; message: string }[];
      [key: string]: unknown;
    };
  };
}

async function call(
  key: TestKey,
  method: 'GET' | 'PUT' | 'DELETE',
  url: string,
  body?: unknown,
  on: TestApi = api,
): Promise<Answer> {
  const response = await fetch(`${on.url}${url}`, {
    method,
    headers: {
      ...bearer(key.key),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  return { status: response.status, body: JSON.parse(text) as Answer['body'] };
}

const channel = (kind: string) => `/v1/notification-channels/${kind}`;
const routes = (audience: string, kind: string) =>
  `/v1/notification-routes/${encodeURIComponent(audience)}/${kind}`;
const optOut = (email: string, kind: string) =>
  `/v1/notification-opt-outs/${encodeURIComponent(email)}/${kind}`;

function expectInvalid(answer: Answer, at: string, message?: RegExp): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 'invalid_request', retryable: false });
  const issue = answer.body.error?.issues?.find((candidate) => candidate.path === at);
  expect(issue).toBeDefined();
  if (message) expect(issue?.message).toMatch(message);
}

/** The audit events of notification changes in an environment, oldest first. */
async function changesIn(environmentId: string) {
  return db.sql<{ action: string; agentId: string; via: string; request: unknown }[]>`
    select action, agent_id, via, request from audit_events
    where environment_id = ${environmentId} and action like 'notifications.%'
    order by seq`;
}

const relay = {
  host: '127.0.0.1',
  port: 2525,
  security: 'none',
  username: 'gatehouse',
  password: PASSWORD,
  sender_address: 'approvals@example.com',
  sender_name: 'Gatehouse approvals',
};

describe('notification channels', () => {
  it('sets an SMTP relay whose password is write-only, kept while the host stays', async () => {
    expect(await call(admin, 'GET', '/v1/notification-channels')).toEqual({
      status: 200,
      body: { data: [] },
    });
    const set = await call(admin, 'PUT', channel('email'), relay);
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({
      kind: 'email',
      host: '127.0.0.1',
      port: 2525,
      security: 'none',
      username: 'gatehouse',
      password_set: true,
      sender_address: 'approvals@example.com',
      sender_name: 'Gatehouse approvals',
      updated_at: expect.any(String),
      updated_by: 'ops console',
    });
    // Left out, the password is kept while the host is the same…
    const withoutPassword: Partial<typeof relay> = { ...relay };
    delete withoutPassword.password;
    const kept = await call(admin, 'PUT', channel('email'), { ...withoutPassword, port: 2526 });
    expect(kept.body.data).toMatchObject({ port: 2526, password_set: true });
    // …but never sent to another host: it must be given again.
    const moved = await call(admin, 'PUT', channel('email'), {
      ...withoutPassword,
      host: '127.0.0.2',
    });
    expectInvalid(moved, 'password', /host changed/);
    // null: no password (and no user name needs none).
    const none = await call(admin, 'PUT', channel('email'), {
      ...withoutPassword,
      username: null,
      password: null,
    });
    expect(none.body.data).toMatchObject({ username: null, password_set: false });
    expect((await call(admin, 'PUT', channel('email'), relay)).status).toBe(200);
    // The default port follows the security.
    const defaulted = await call(admin, 'PUT', channel('email'), {
      host: '127.0.0.1',
      security: 'tls',
      sender_address: 'approvals@example.com',
    });
    expect(defaulted.body.data).toMatchObject({ port: 465, username: null, password_set: false });
    expect((await call(admin, 'PUT', channel('email'), relay)).status).toBe(200);
  });

  it('sets a Slack app whose token and signing secret are write-only, and Teams with nothing', async () => {
    const needsBoth = await call(admin, 'PUT', channel('slack'), { bot_token: BOT_TOKEN });
    expectInvalid(needsBoth, 'signing_secret', /none is stored/);
    const set = await call(admin, 'PUT', channel('slack'), {
      bot_token: BOT_TOKEN,
      signing_secret: SIGNING_SECRET,
    });
    expect(set.body.data).toEqual({
      kind: 'slack',
      bot_token_set: true,
      signing_secret_set: true,
      api_base_url: 'https://slack.com/api/',
      updated_at: expect.any(String),
      updated_by: 'ops console',
    });
    // Secrets kept while the API address stays; another address needs them again.
    expect((await call(admin, 'PUT', channel('slack'), {})).status).toBe(200);
    expectInvalid(
      await call(admin, 'PUT', channel('slack'), { api_base_url: 'http://127.0.0.1:9/api' }),
      'bot_token',
      /address changed/,
    );
    const standIn = await call(admin, 'PUT', channel('slack'), {
      bot_token: BOT_TOKEN,
      signing_secret: SIGNING_SECRET,
      api_base_url: 'http://127.0.0.1:9/api',
    });
    expect(standIn.body.data).toMatchObject({ api_base_url: 'http://127.0.0.1:9/api/' });

    expect((await call(admin, 'PUT', channel('teams'), {})).body.data).toMatchObject({
      kind: 'teams',
    });
    const listed = await call(admin, 'GET', '/v1/notification-channels');
    expect((listed.body.data as { kind: string }[]).map((c) => c.kind)).toEqual([
      'email',
      'slack',
      'teams',
    ]);
    // Nothing secret is stored in clear.
    const [row] = await db.sql<{ text: string }[]>`
      select string_agg(c::text, ' ') as text from notification_channels c
      where environment_id = ${admin.environmentId}`;
    for (const secret of SECRETS) expect(row?.text).not.toContain(secret);
    expect(row?.text).toContain('v1.');
  });

  it('removes a channel, 404 when there is none', async () => {
    await call(admin, 'PUT', channel('teams'), {});
    expect(await call(admin, 'DELETE', channel('teams'))).toEqual({
      status: 200,
      body: { data: { kind: 'teams', deleted: true } },
    });
    const again = await call(admin, 'DELETE', channel('teams'));
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 'not_found', retryable: false });
    await call(admin, 'PUT', channel('teams'), {});
  });

  it('refuses malformed settings in the error envelope, naming the field, and stores nothing', async () => {
    const before = await call(admin, 'GET', '/v1/notification-channels');
    expectInvalid(await call(admin, 'PUT', channel('fax'), {}), 'kind');
    expectInvalid(await call(admin, 'PUT', channel('email'), { ...relay, extra: 1 }), 'extra');
    expectInvalid(
      await call(admin, 'PUT', channel('email'), { ...relay, host: 'smtp://x' }),
      'host',
    );
    expectInvalid(await call(admin, 'PUT', channel('email'), { ...relay, port: 70000 }), 'port');
    expectInvalid(
      await call(admin, 'PUT', channel('email'), { ...relay, security: 'ssl' }),
      'security',
    );
    expectInvalid(
      await call(admin, 'PUT', channel('email'), { ...relay, sender_address: 'nobody' }),
      'sender_address',
    );
    // A name carried into a header must not break it.
    expectInvalid(
      await call(admin, 'PUT', channel('email'), {
        ...relay,
        sender_name: 'Gatehouse\r\nBcc: x@evil.example',
      }),
      'sender_name',
    );
    expectInvalid(
      await call(admin, 'PUT', channel('email'), { ...relay, username: null }),
      'password',
      /username/,
    );
    expectInvalid(
      await call(admin, 'PUT', channel('slack'), { bot_token: 'xoxp-user-token' }),
      'bot_token',
    );
    expectInvalid(
      await call(admin, 'PUT', channel('slack'), { signing_secret: 'not hex' }),
      'signing_secret',
    );
    expectInvalid(await call(admin, 'PUT', channel('teams'), { url: 'x' }), 'url');
    const refused = await call(admin, 'PUT', channel('email'), { ...relay, port: 0 });
    expect(refused.body.error?.message).toMatch(/^Invalid request body \(port: /);
    expect(await call(admin, 'GET', '/v1/notification-channels')).toEqual(before);
  });
});

describe('notification routes', () => {
  it('replaces an audience’s routes of one channel, a Teams webhook shown by its host only', async () => {
    expect(await call(admin, 'GET', '/v1/notification-routes')).toEqual({
      status: 200,
      body: { data: [] },
    });
    const email = await call(admin, 'PUT', routes('group:finance', 'email'), {
      targets: [{ address: 'finance@example.com' }, { each_person: true }],
    });
    expect(email.body.data).toEqual({
      audience: 'group:finance',
      kind: 'email',
      targets: [{ each_person: true }, { address: 'finance@example.com' }],
    });
    const teams = await call(admin, 'PUT', routes('group:finance', 'teams'), {
      targets: [{ webhook_url: TEAMS_URL }],
    });
    expect(teams.body.data).toEqual({
      audience: 'group:finance',
      kind: 'teams',
      targets: [{ webhook_host: 'prod-42.westeurope.logic.azure.com' }],
    });
    expect(
      (
        await call(admin, 'PUT', routes('*', 'slack'), {
          targets: [{ each_person: true }, { slack_channel: 'C0APPROVALS' }],
        })
      ).status,
    ).toBe(200);
    // A person's routes are kept under the email lower-cased.
    expect(
      (
        await call(admin, 'PUT', routes('person:Ada@Example.COM', 'email'), {
          targets: [{ address: 'ada.desk@example.com' }],
        })
      ).body.data,
    ).toMatchObject({ audience: 'person:ada@example.com' });

    // Changing the e-mail routes leaves the Teams webhook as it was.
    await call(admin, 'PUT', routes('group:finance', 'email'), {
      targets: [{ each_person: true }],
    });
    expect((await call(admin, 'GET', '/v1/notification-routes')).body.data).toEqual([
      {
        audience: '*',
        kind: 'slack',
        targets: [{ each_person: true }, { slack_channel: 'C0APPROVALS' }],
      },
      { audience: 'group:finance', kind: 'email', targets: [{ each_person: true }] },
      {
        audience: 'group:finance',
        kind: 'teams',
        targets: [{ webhook_host: 'prod-42.westeurope.logic.azure.com' }],
      },
      {
        audience: 'person:ada@example.com',
        kind: 'email',
        targets: [{ address: 'ada.desk@example.com' }],
      },
    ]);
    const [row] = await db.sql<{ text: string }[]>`
      select string_agg(r::text, ' ') as text from notification_routes r
      where environment_id = ${admin.environmentId}`;
    for (const secret of SECRETS) expect(row?.text).not.toContain(secret);

    // An empty list removes; DELETE removes too, and is 404 when there is nothing.
    expect(
      (await call(admin, 'PUT', routes('person:ada@example.com', 'email'), { targets: [] })).body
        .data,
    ).toEqual({ audience: 'person:ada@example.com', kind: 'email', targets: [] });
    expect(await call(admin, 'DELETE', routes('*', 'slack'))).toEqual({
      status: 200,
      body: { data: { audience: '*', kind: 'slack', deleted: true } },
    });
    expect((await call(admin, 'DELETE', routes('*', 'slack'))).status).toBe(404);
  });

  it('refuses malformed routes in the error envelope, naming the field', async () => {
    const before = await call(admin, 'GET', '/v1/notification-routes');
    const email = (targets: unknown) =>
      call(admin, 'PUT', routes('group:finance', 'email'), { targets });
    expectInvalid(await email([{ slack_channel: 'C0APPROVALS' }]), 'targets.0', /E-mail takes/);
    expectInvalid(await email([{ each_person: true }, { each_person: true }]), 'targets.1');
    expectInvalid(
      await email([{ address: 'a@example.com' }, { address: 'A@example.com' }]),
      'targets.1',
      /twice/,
    );
    expectInvalid(await email([{ address: 'not an address' }]), 'targets.0.address');
    expectInvalid(await email([{ each_person: false }]), 'targets.0.each_person');
    expectInvalid(await email([{}]), 'targets.0', /exactly one/);
    expectInvalid(
      await email([{ each_person: true, address: 'a@example.com' }]),
      'targets.0',
      /exactly one/,
    );
    expectInvalid(await email([{ each_person: true, to: 'x' }]), 'targets.0.to');
    expectInvalid(await email('each_person'), 'targets');
    expectInvalid(
      await call(admin, 'PUT', routes('group:finance', 'slack'), {
        targets: [{ slack_channel: '#general' }],
      }),
      'targets.0.slack_channel',
    );
    expectInvalid(
      await call(admin, 'PUT', routes('group:finance', 'teams'), {
        targets: [{ webhook_url: 'ftp://example.com/hook' }],
      }),
      'targets.0.webhook_url',
    );
    expectInvalid(
      await call(admin, 'PUT', routes('finance', 'email'), { targets: [] }),
      'audience',
    );
    expectInvalid(
      await call(admin, 'PUT', routes('person:ada', 'email'), { targets: [] }),
      'audience',
    );
    expectInvalid(
      await call(admin, 'PUT', routes('group:a\tb', 'email'), { targets: [] }),
      'audience',
    );
    expectInvalid(await call(admin, 'PUT', routes('*', 'sms'), { targets: [] }), 'kind');
    expect(await call(admin, 'GET', '/v1/notification-routes')).toEqual(before);
  });
});

describe('opt-outs', () => {
  it('opts a person out and back in, by email without case; Teams has nothing to opt out of', async () => {
    expect(await call(admin, 'PUT', optOut('Bob@Example.com', 'email'))).toEqual({
      status: 200,
      body: { data: { email: 'bob@example.com', kind: 'email', opted_out: true } },
    });
    // Again: nothing changes.
    expect((await call(admin, 'PUT', optOut('bob@example.com', 'email'))).status).toBe(200);
    expect((await call(admin, 'GET', '/v1/notification-opt-outs')).body.data).toEqual([
      {
        email: 'bob@example.com',
        kind: 'email',
        created_at: expect.any(String),
        created_by: 'ops console',
      },
    ]);
    expectInvalid(await call(admin, 'PUT', optOut('bob@example.com', 'teams')), 'kind', /Teams/);
    expectInvalid(await call(admin, 'PUT', optOut('bob', 'email')), 'email');
    expect(await call(admin, 'DELETE', optOut('BOB@example.com', 'email'))).toEqual({
      status: 200,
      body: { data: { email: 'bob@example.com', kind: 'email', opted_out: false } },
    });
    expect((await call(admin, 'DELETE', optOut('bob@example.com', 'email'))).status).toBe(404);
    expect((await call(admin, 'GET', '/v1/notification-opt-outs')).body.data).toEqual([]);
  });
});

describe('who may', () => {
  it('needs notifications:read to list and notifications:manage to change, which agents’ keys lack', async () => {
    const reads = [
      '/v1/notification-channels',
      '/v1/notification-routes',
      '/v1/notification-opt-outs',
    ];
    for (const key of [agent, readOnly]) {
      for (const url of reads) {
        const answer = await call(key, 'GET', url);
        expect(answer.status).toBe(403);
        expect(answer.body.error).toMatchObject({
          code: 'insufficient_access',
          required_scope: 'notifications:read',
        });
      }
    }
    for (const key of [agent, reader]) {
      for (const [method, url, body] of [
        ['PUT', channel('email'), relay],
        ['DELETE', channel('email'), undefined],
        ['PUT', routes('*', 'email'), { targets: [{ address: 'bot@evil.example' }] }],
        ['DELETE', routes('group:finance', 'email'), undefined],
        ['PUT', optOut('alice@example.com', 'email'), undefined],
        ['DELETE', optOut('alice@example.com', 'email'), undefined],
      ] as const) {
        const answer = await call(key, method, url, body);
        expect(answer.status).toBe(403);
        expect(answer.body.error).toMatchObject({
          code: 'insufficient_access',
          required_scope: 'notifications:manage',
        });
      }
    }
    for (const url of reads) expect((await call(reader, 'GET', url)).status).toBe(200);
    // Nothing an agent tried is routed.
    const listed = JSON.stringify((await call(admin, 'GET', '/v1/notification-routes')).body);
    expect(listed).not.toContain('evil.example');
  });

  it('keeps each environment’s channels, routes and opt-outs to itself', async () => {
    for (const url of [
      '/v1/notification-channels',
      '/v1/notification-routes',
      '/v1/notification-opt-outs',
    ]) {
      expect(await call(otherEnv, 'GET', url)).toEqual({ status: 200, body: { data: [] } });
    }
    expect((await call(otherEnv, 'DELETE', channel('email'))).status).toBe(404);
    expect((await call(otherEnv, 'DELETE', routes('group:finance', 'email'))).status).toBe(404);
    await call(otherEnv, 'PUT', routes('group:finance', 'email'), {
      targets: [{ address: 'other@example.com' }],
    });
    const mine = await call(admin, 'GET', '/v1/notification-routes');
    expect(JSON.stringify(mine.body)).not.toContain('other@example.com');
  });
});

describe('addresses, with NOTIFY_ALLOW_PRIVATE off (production)', () => {
  const onStrict = (method: 'PUT', url: string, body: unknown) =>
    call(admin, method, url, body, strict);

  it('refuses an SMTP relay on loopback, private or link-local addresses, and plain SMTP', async () => {
    for (const host of [
      '127.0.0.1',
      'localhost',
      '10.1.2.3',
      '192.168.0.10',
      '169.254.169.254',
      '::1',
    ]) {
      expectInvalid(
        await onStrict('PUT', channel('email'), { ...relay, host, security: 'starttls' }),
        'host',
        /loopback, private or link-local address \(NOTIFY_ALLOW_PRIVATE=true allows it\)/,
      );
    }
    // Plain SMTP would send the password and the links in clear across the internet.
    expectInvalid(
      await onStrict('PUT', channel('email'), {
        ...relay,
        host: '93.184.216.34',
        security: 'none',
      }),
      'host',
      /plain SMTP/,
    );
    // Even where private addresses are allowed, plain SMTP stays inside.
    expectInvalid(
      await call(admin, 'PUT', channel('email'), { ...relay, host: '93.184.216.34' }),
      'host',
      /plain SMTP/,
    );
    // A public relay with STARTTLS is fine.
    const good = await onStrict('PUT', channel('email'), {
      ...relay,
      host: '93.184.216.34',
      security: 'starttls',
    });
    expect(good.body.data).toMatchObject({ host: '93.184.216.34', port: 2525, password_set: true });
    await call(admin, 'PUT', channel('email'), relay);
  });

  it('refuses another Slack API address, and Teams webhooks on private addresses or plain http', async () => {
    for (const apiBaseUrl of [
      'http://127.0.0.1:9/api/',
      'https://10.0.0.8/api/',
      'https://slack.evil.example/api/',
    ]) {
      expectInvalid(
        await onStrict('PUT', channel('slack'), {
          bot_token: BOT_TOKEN,
          signing_secret: SIGNING_SECRET,
          api_base_url: apiBaseUrl,
        }),
        'api_base_url',
        /can only be https:\/\/slack\.com\/api\//,
      );
    }
    for (const url of [
      'https://127.0.0.1/workflows/x?sig=S3cr3tSignature',
      'https://[::1]/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://10.0.0.8/hook',
      'http://93.184.216.34/hook',
      'https://user:pw@93.184.216.34/hook',
    ]) {
      expectInvalid(
        await onStrict('PUT', routes('group:finance', 'teams'), {
          targets: [{ webhook_url: url }],
        }),
        'targets.0.webhook_url',
      );
    }
    // Nothing was changed by any of them.
    const teams = (await call(admin, 'GET', '/v1/notification-routes')).body.data as {
      kind: string;
      targets: unknown[];
    }[];
    expect(teams.find((route) => route.kind === 'teams')?.targets).toEqual([
      { webhook_host: 'prod-42.westeurope.logic.azure.com' },
    ]);
  });
});

describe('the record', () => {
  it('audits every change with its key, never a secret, and logs none', async () => {
    const changes = await changesIn(admin.environmentId);
    expect(changes.length).toBeGreaterThan(10);
    for (const change of changes) {
      expect(change).toMatchObject({
        agentId: 'ops console',
        via: 'operator',
        request: { channel: 'api', key: { id: admin.id, name: 'ops console' } },
      });
      for (const secret of SECRETS) expect(JSON.stringify(change.request)).not.toContain(secret);
    }
    expect(changes.map((change) => change.action)).toEqual(
      expect.arrayContaining([
        'notifications.channels',
        'notifications.routes',
        'notifications.opt_outs',
      ]),
    );
    expect(
      changes.find((change) => change.action === 'notifications.channels')?.request,
    ).toMatchObject({
      set: { kind: 'email', password_set: true },
    });
    // No refused change was recorded: the other environment's one change is its own.
    expect(await changesIn(otherEnv.environmentId)).toHaveLength(1);
    const logs = [...api.logs, ...strict.logs].join('\n');
    expect(logs).toContain('notification channel set');
    for (const secret of SECRETS) expect(logs).not.toContain(secret);
  });
});
