import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { saveAuthorizedConnection } from '../../activities/db/connections.js';
import { ENCRYPTED_ENCODING } from '../../infra/temporal/payload-codec.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';
import { startTestApi } from '../support/api.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { startTestWorker } from '../support/worker.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * What a call carries (its input, the headers it forwards, the app's answer
 * and the app's response headers) is sealed before Temporal stores it. The
 * history is read the way an operator would, with the Temporal CLI against the server itself;
 * the codec endpoint then opens it for a full key only.
 */
const run = promisify(execFile);
const mark = (what: string) => `${what}-${randomBytes(9).toString('hex')}`;

const INPUT = mark('input');
const HEADER = mark('header');
const ANSWER = mark('answer');
const COOKIE = mark('cookie');
const SECRETS = { INPUT, HEADER, ANSWER, COOKIE };

const actionUser = mark('u_enc_action');
const proxyUser = mark('u_enc_proxy');

let stack: CallStack;
let app: http.Server;
let standard: TestKey;
let cli: string;
const appSaw: { note: string | undefined }[] = [];

/** A catalog app (Slack's slot, through APP_URLS) that sets a cookie and answers a marked body. */
async function startCookieApp(): Promise<string> {
  app = http.createServer((req, res) => {
    const note = req.headers['x-note'];
    appSaw.push({ note: typeof note === 'string' ? note : undefined });
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', `sid=${COOKIE}; Path=/; HttpOnly`);
      res.end(JSON.stringify({ ok: true, answer: ANSWER }));
    });
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${String((app.address() as AddressInfo).port)}`;
}

/**
 * A text with everything it encodes spelled out: payload bytes are base64 in protobuf JSON, and
 * a payload may hold base64 again (a proxied body), so every base64 string is read as UTF-8, and
 * read further when that is JSON.
 */
function searchable(text: string, depth = 0): string {
  const parts = [text];
  if (depth > 4) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  const visit = (node: unknown): void => {
    if (typeof node === 'string') {
      if (node.length >= 4 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(node)) {
        parts.push(searchable(Buffer.from(node, 'base64').toString('utf8'), depth + 1));
      } else if (/^[[{"]/.test(node)) {
        parts.push(searchable(node, depth + 1));
      }
    } else if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (typeof node === 'object' && node !== null) {
      Object.values(node).forEach(visit);
    }
  };
  visit(value);
  return parts.join('\n');
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Every payload of a `temporal workflow show --output json` dump. */
function payloadsIn(dump: string): JsonPayload[] {
  const found: JsonPayload[] = [];
  JSON.parse(dump, (_key, value: unknown) => {
    if (
      typeof value === 'object' &&
      value !== null &&
      'metadata' in value &&
      typeof (value as JsonPayload).metadata?.encoding === 'string'
    ) {
      found.push(value as JsonPayload);
    }
    return value;
  });
  return found;
}

const encodingOf = (payload: JsonPayload) =>
  Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString('utf8');

/** The Temporal CLI's JSON dump of a workflow, straight from the server (no codec unless asked). */
async function showWithCli(workflowId: string, codecArgs: string[] = []): Promise<string> {
  const { stdout } = await run(
    cli,
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      stack.config.temporal.address,
      '--namespace',
      stack.config.temporal.namespace,
      '--output',
      'json',
      ...codecArgs,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** The call workflows of a user, once visibility (eventually consistent) lists `count`. */
async function callWorkflows(user: string, count: number): Promise<string[]> {
  const ids = await eventually(
    `${String(count)} call workflows of ${user}`,
    async () => {
      const listed: string[] = [];
      for await (const execution of stack.api.temporal.workflow.list({
        query: `WorkflowType = 'governedCall' AND GatehouseUser = '${user}'`,
      })) {
        listed.push(execution.workflowId);
      }
      return listed.length >= count ? listed : null;
    },
    250,
  );
  expect(ids).toHaveLength(count);
  return [...new Set(ids)];
}

async function codec(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.api.url}/codec/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const dumps = new Map<string, string>();
/** Where the Temporal UI is, as the API is told (TEMPORAL_UI_URL). */
const TEMPORAL_UI = 'http://127.0.0.1:8233';

const started = stopsAfterAll();

beforeAll(async () => {
  cli = await resolveTemporalCli();
  const appUrl = await startCookieApp();
  started.push(() => new Promise((resolve) => app.close(resolve)));
  stack = started.add(
    await startCallStack({
      appUrls: { slack: appUrl },
      env: { TEMPORAL_UI_URL: TEMPORAL_UI },
    }),
  );
  await stack.setDefaults({ read: 'allow', write: 'allow', destructive: 'allow' });
  standard = await createTestKey(stack.db.sql, { env: 'test', access: 'standard' });
  await stack.connect(actionUser);
  const user = await upsertConnectedUser(stack.db.sql, stack.environmentId, proxyUser, undefined);
  await saveAuthorizedConnection(stack.db.sql, stack.config.encryption, {
    environmentId: stack.environmentId,
    connectedUserId: user.id,
    app: 'slack',
    authConfigId: null,
    tokens: { accessToken: 'xoxb-encrypted-history', refreshToken: null, expiresAt: null },
    grantedScopes: ['read', 'write'],
    providerScopes: ['channels:read'],
  });
});

describe('call data in workflow histories', () => {
  it('is sealed: a history dumped with the Temporal CLI holds no input, header, answer or cookie', async () => {
    const created = await stack.run('acme.create_task', {
      user: actionUser,
      input: { title: INPUT },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ ok: true, data: { title: INPUT } });

    const proxied = await stack.request(stack.key, 'GET', '/v1/proxy/slack/conversations.info', {
      headers: { 'service-user': proxyUser, 'x-note': HEADER },
    });
    expect(proxied.status).toBe(200);
    expect(proxied.body).toEqual({ ok: true, answer: ANSWER });
    expect(appSaw.at(-1)).toEqual({ note: HEADER });

    for (const user of [actionUser, proxyUser]) {
      const [id] = await callWorkflows(user, 1);
      if (!id) throw new Error('no workflow');
      const dump = await showWithCli(id);
      dumps.set(user, dump);
      const text = searchable(dump);
      for (const [name, secret] of Object.entries(SECRETS)) {
        expect({ name, found: text.includes(secret) }).toEqual({ name, found: false });
      }
      // The payloads are there, sealed; the operator's labels (the summary, the search
      // attributes) are not, so the Temporal UI can filter on them without a codec.
      const encodings = payloadsIn(dump).map(encodingOf);
      expect(encodings).toContain(ENCRYPTED_ENCODING);
      const action = user === actionUser ? 'acme.create_task' : 'slack.proxy';
      expect(text).toContain(`${action} for user ${user}, agent test-agent`);
      expect(text).toContain(user); // the search attributes
    }
  });

  it('opens through the codec endpoint for a full key only, as the CLI and the UI call it', async () => {
    const logsBefore = stack.api.logs.length;
    const payloads = [...dumps.values()].flatMap(payloadsIn);
    const sealed = payloads.filter((payload) => encodingOf(payload) === ENCRYPTED_ENCODING);
    expect(sealed.length).toBeGreaterThan(4);

    const opened = await codec('decode', { payloads }, bearer(stack.key.key));
    expect(opened.status).toBe(200);
    expect(opened.headers.get('cache-control')).toBe('no-store');
    const decoded = opened.body.payloads as JsonPayload[];
    expect(decoded).toHaveLength(payloads.length);
    expect(decoded.map(encodingOf)).not.toContain(ENCRYPTED_ENCODING);
    const text = searchable(JSON.stringify(opened.body));
    for (const secret of [INPUT, HEADER, ANSWER]) expect(text).toContain(secret);
    // An allowed read is settled inside its one step: the app's set-cookie, which the
    // caller never gets, is dropped before anything reaches the history, sealed or not.
    expect(text).not.toContain(COOKIE);
    // X-API-Key is the other scheme a key may come in.
    expect((await codec('decode', { payloads }, { 'x-api-key': stack.key.key })).status).toBe(200);

    const refused = await codec('decode', { payloads }, bearer(standard.key));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: expect.objectContaining({
        code: 'insufficient_access',
        retryable: false,
        required_access: 'full',
      }) as unknown,
    });
    const anonymous = await codec('decode', { payloads });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({
      error: expect.objectContaining({ code: 'invalid_api_key' }) as unknown,
    });
    // The UI forwards its own OIDC token when so configured: that is not a Gatehouse key.
    expect((await codec('decode', { payloads }, bearer('eyJhbGciOi.oidc.token'))).status).toBe(401);
    for (const answer of [refused, anonymous]) {
      expect(JSON.stringify(answer.body)).not.toContain(INPUT);
    }
    // What the codec opened never reaches its log lines.
    const codecLogs = stack.api.logs.slice(logsBefore);
    expect(codecLogs.some((line) => line.includes('workflow payloads decoded'))).toBe(true);
    for (const line of codecLogs) {
      for (const secret of Object.values(SECRETS)) expect(line).not.toContain(secret);
    }

    // The Temporal CLI's own codec client, with the key as its --codec-auth.
    const id = (await callWorkflows(actionUser, 1))[0] ?? '';
    const readable = await showWithCli(id, [
      '--codec-endpoint',
      `${stack.api.url}/codec`,
      '--codec-auth',
      `Bearer ${stack.key.key}`,
    ]);
    expect(searchable(readable)).toContain(INPUT);
  });

  it('encodes for a full key, and rejects an altered payload', async () => {
    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify({ typed: INPUT })).toString('base64'),
    };
    expect((await codec('encode', { payloads: [plain] }, bearer(standard.key))).status).toBe(403);
    const encoded = await codec('encode', { payloads: [plain] }, bearer(stack.key.key));
    expect(encoded.status).toBe(200);
    const [sealed] = encoded.body.payloads as JsonPayload[];
    if (!sealed) throw new Error('nothing encoded');
    expect(encodingOf(sealed)).toBe(ENCRYPTED_ENCODING);
    expect(searchable(JSON.stringify(sealed))).not.toContain(INPUT);

    // An operator's encode has no workflow, so what it seals names none and belongs to no
    // environment: the endpoint does not open it again (codec-environments.test.ts).
    const decoded = await codec('decode', { payloads: [sealed] }, bearer(stack.key.key));
    expect(decoded.status).toBe(404);

    const fromHistory = [...dumps.values()]
      .flatMap(payloadsIn)
      .find((payload) => encodingOf(payload) === ENCRYPTED_ENCODING);
    if (!fromHistory) throw new Error('no sealed payload in the histories');
    const data = Buffer.from(fromHistory.data ?? '', 'base64');
    data[data.length - 1] = (data[data.length - 1] ?? 0) ^ 1;
    const altered = await codec(
      'decode',
      { payloads: [{ ...fromHistory, data: data.toString('base64') }] },
      bearer(stack.key.key),
    );
    expect(altered.status).toBe(400);
    expect(altered.body).toEqual({
      error: expect.objectContaining({ code: 'invalid_request' }) as unknown,
    });
    const malformed = await codec('decode', { payloads: 'all' }, bearer(stack.key.key));
    expect(malformed.status).toBe(400);
  });

  it('lets the Temporal UI in from its origin, with a codec session signed in by a full key', async () => {
    const ui = TEMPORAL_UI;
    const preflight = await fetch(`${stack.api.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: ui,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ui);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
    const elsewhere = await fetch(`${stack.api.url}/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'https://attacker.example', 'access-control-request-method': 'POST' },
    });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
    // Another port of the same host is another origin: another program, not the UI.
    const apiOrigin = new URL(stack.api.url).origin;
    for (const origin of ['http://127.0.0.1:8234', apiOrigin, 'http://localhost:8233']) {
      for (const method of ['OPTIONS', 'POST']) {
        const answer = await fetch(`${stack.api.url}/codec/decode`, {
          method,
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'content-type': 'application/json',
            ...bearer(stack.key.key),
          },
          ...(method === 'POST' ? { body: '{"payloads":[]}' } : {}),
        });
        expect({
          origin,
          method,
          allowed: answer.headers.get('access-control-allow-origin'),
        }).toEqual({ origin, method, allowed: null });
        expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      }
    }

    const page = await fetch(`${stack.api.url}/codec/session`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('name="key"');

    const signIn = (key: string, headers: Record<string, string> = {}) =>
      fetch(`${stack.api.url}/codec/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ key }).toString(),
        redirect: 'manual',
      });
    const asStandard = await signIn(standard.key);
    expect(asStandard.status).toBe(403);
    expect(asStandard.headers.get('set-cookie')).toBeNull();
    expect((await signIn('gk_test_not-a-key')).status).toBe(401);
    const crossSite = await signIn(stack.key.key, { 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('set-cookie')).toBeNull();

    const signedIn = await signIn(stack.key.key, { 'sec-fetch-site': 'same-origin' });
    expect(signedIn.status).toBe(200);
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^gatehouse_codec=v1\./);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/codec');
    // The cookie holds the key sealed, never the key itself.
    expect(setCookie).not.toContain(stack.key.key);
    const cookie = setCookie.split(';')[0] ?? '';

    const payloads = [...dumps.values()].flatMap(payloadsIn);
    const fromUi = await codec('decode', { payloads }, { origin: ui, cookie });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(ui);
    expect(searchable(JSON.stringify(fromUi.body))).toContain(ANSWER);
    // A forwarded OIDC token next to the session does not spoil it.
    expect(
      (await codec('decode', { payloads }, { cookie, ...bearer('oidc-access-token') })).status,
    ).toBe(200);
    const forged = await codec('decode', { payloads }, { cookie: `${cookie}x` });
    expect(forged.status).toBe(401);

    const signOut = await fetch(`${stack.api.url}/codec/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: 'action=sign-out',
    });
    expect(signOut.status).toBe(200);
    expect(signOut.headers.get('set-cookie')).toMatch(/^gatehouse_codec=; .*Max-Age=0/);
  });

  it('keeps a call held before the codec readable: it completes after the upgrade', async () => {
    const title = mark('held-before-codec');
    const user = mark('u_enc_upgrade');
    await stack.connect(user);
    await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });

    // The stack as it ran before this issue: a worker and an API client without the codec.
    await stack.worker.stop();
    const before = await startTestWorker(stack.config, stack.db.sql, { dataConverter: {} });
    const connection = await Connection.connect({ address: stack.config.temporal.address });
    const plainClient = new Client({ connection, namespace: stack.config.temporal.namespace });
    const oldApi = await startTestApi(stack.config, stack.db.sql, { temporal: plainClient });
    const held = await fetch(`${oldApi.url}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: { ...bearer(stack.key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ user, input: { title } }),
    });
    expect(held.status).toBe(403);
    const approval = ((await held.json()) as { error: { approval: { id: string } } }).error
      .approval;
    const [id] = await callWorkflows(user, 1);
    if (!id) throw new Error('no workflow');
    // Without the codec the title was in the clear: what the checks above would have caught.
    expect(searchable(await showWithCli(id))).toContain(title);

    await oldApi.close();
    await connection.close();
    await before.stop();
    // The upgrade: worker and API with the codec, the call still waiting in Temporal.
    await stack.restartWorker();
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approval.id}/approve`,
    );
    expect(approved.status).toBe(200);
    // The current details, as the UI asks for them, are never sealed, so they read without any
    // codec and carry no call input.
    const { stdout: details } = await run(cli, [
      'workflow',
      'query',
      '--workflow-id',
      id,
      '--name',
      '__temporal_workflow_metadata',
      '--address',
      stack.config.temporal.address,
      '--namespace',
      stack.config.temporal.namespace,
      '--output',
      'json',
    ]);
    expect(searchable(details)).toContain(`Approval ${approval.id} approved`);
    expect(searchable(details)).not.toContain(title);
    const ran = await stack.run('acme.create_task', { user, input: { title } });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title } });

    const after = await showWithCli(id);
    expect(payloadsIn(after).map(encodingOf)).toContain(ENCRYPTED_ENCODING);
    const opened = await codec('decode', { payloads: payloadsIn(after) }, bearer(stack.key.key));
    expect(opened.status).toBe(200);
    expect(searchable(JSON.stringify(opened.body))).toContain(title);
  });
});
