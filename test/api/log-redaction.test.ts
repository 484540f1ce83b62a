import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { loggableUrl, requestLog } from '../../api/http/request-log.js';
import { createLogger, redactHeaders } from '../../infra/logger.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let key: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
  key = await createTestKey(db.sql, { env: 'test', access: 'full', audience: 'business' });
});

/** Every value sent in a place the logs must not show, to grep the whole log for at the end. */
const secrets: string[] = [];

/** A secret that cannot occur in a log by chance: 24 random hex characters. */
function secret(label: string): string {
  const value = `${label}${randomBytes(12).toString('hex')}`;
  secrets.push(value);
  return value;
}

/** A token shaped like a real link token (base64url of 32 bytes), so routes take it as one. */
function linkToken(): string {
  const value = randomBytes(32).toString('base64url');
  secrets.push(value);
  return value;
}

async function send(path: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${api.url}${path}`, { headers, redirect: 'manual' });
  await response.arrayBuffer();
  return response.status;
}

describe('log redaction', () => {
  it('redacts every credential header, whatever the case of its name', async () => {
    await send('/v1/funded-access', {
      Authorization: `Bearer ${key.key}`,
      'Proxy-Authorization': `Basic ${secret('proxyauth')}`,
      Cookie: `session=${secret('cookie')}`,
      'X-Auth-Token': secret('xauthtoken'),
      'X-Upstream-Secret': secret('upstreamsecret'),
      'X-Session-Id': secret('sessionid'),
    });
    secrets.push(key.key, key.key.slice(-32));
    await send('/v1/funded-access', {
      'X-API-KEY': `gk_test_${secret('').slice(0, 24).padEnd(32, 'A')}`,
      'PROXY-AUTHORIZATION': `Bearer ${secret('upperproxy')}`,
    });
    await send('/v1/funded-access', { authorization: `Bearer ${secret('wrongkey')}` });
    const logged = api.logs.filter((line) => line.includes('"headers"'));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('\n')).toContain('"proxy-authorization":"[redacted]"');
  });

  it.each([
    ['the link page, in capitals', (t: string) => `/CONNECT/${t}`],
    ['the link page, capitalised', (t: string) => `/Connect/${t}`],
    ['the start step, mixed case', (t: string) => `/cOnNeCt/${t}/START`],
    ['the link page with a trailing slash', (t: string) => `/connect/${t}/`],
    ['the link page, percent-encoded', (t: string) => `/%63onnect/${t}`],
    ['the link page after a double slash', (t: string) => `//connect/${t}`],
    ['the approval page', (t: string) => `/approvals/review/${t}`],
    ['the approval page, in capitals', (t: string) => `/APPROVALS/REVIEW/${t}`],
    ['the approval page, capitalised, with a query', (t: string) => `/Approvals/Review/${t}?a=1`],
  ])('keeps the token of %s out of the log', async (_what, path) => {
    const token = linkToken();
    await send(path(token));
    expect(api.logs.join('\n')).not.toContain(token);
  });

  it.each([
    ['/connect/callback'],
    ['/Connect/callback'],
    ['/CONNECT/CALLBACK'],
    ['/connect/Callback/'],
  ])('keeps the code and state of %s out of the log', async (path) => {
    const code = secret('code');
    const state = secret('state');
    await send(`${path}?code=${code}&state=${state}`);
    await send(`${path}?error=access_denied&state=${state}&error_description=${secret('desc')}`);
    expect(api.logs.join('\n')).not.toContain(code);
  });

  it('keeps link tokens out of a logged Referer', async () => {
    const token = linkToken();
    const code = secret('refcode');
    await send('/healthz-not-here', {
      Referer: `http://127.0.0.1/Connect/${token}`,
    });
    await send('/v1/funded-access', {
      Authorization: `Bearer ${key.key}`,
      Referer: `http://127.0.0.1/connect/callback?code=${code}`,
    });
    const all = api.logs.join('\n');
    expect(all).not.toContain(token);
    expect(all).not.toContain(code);
  });

  it('logs a redirect without its query: the OAuth state and what a caller put there', async () => {
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'info' },
      { write: (line: string) => void lines.push(line) },
    );
    const state = secret('state');
    const app = express();
    app.use((_req, res, next) => {
      res.locals.traceId = 'trace';
      next();
    });
    app.use(requestLog(logger));
    app.get('/go', (_req, res) => {
      res.redirect(`https://app.example/authorize?client_id=c&state=${state}`);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await fetch(`http://127.0.0.1:${String(port)}/go`, { redirect: 'manual' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const all = lines.join('\n');
    expect(all).toContain('"location":"https://app.example/authorize"');
    expect(all).not.toContain(state);
  });

  it('wrote none of the secrets sent anywhere in the log', () => {
    expect(api.logs.length).toBeGreaterThan(10);
    const all = api.logs.join('\n');
    for (const value of secrets) expect(all).not.toContain(value);
  });
});

describe('loggableUrl', () => {
  it.each([
    ['/connect/abc', '/connect/[token]'],
    ['/CONNECT/abc', '/connect/[token]'],
    ['/Connect/abc/start', '/connect/[token]/start'],
    ['/connect/abc/START?x=1', '/connect/[token]/start'],
    ['/connect/callback?code=c&state=s', '/connect/callback'],
    ['/Connect/Callback/?code=c', '/connect/callback'],
    // The console's sign-in callback carries the identity provider's code and state.
    ['/console/callback?code=c&state=s', '/console/callback'],
    ['/Console/Callback/?code=c&state=s', '/console/callback'],
    ['http://host/console/callback?code=c', 'http://host/console/callback'],
    ['/approvals/review/abc', '/approvals/review/[token]'],
    ['/APPROVALS/Review/abc?x=1', '/approvals/review/[token]'],
    ['/%61pprovals/review/abc', '/approvals/review/[token]'],
    ['//connect//abc', '/connect/[token]'],
    ['/connect', '/connect'],
    ['/v1/audit?user=u_1', '/v1/audit?user=u_1'],
    ['/v1/connect/links', '/v1/connect/links'],
    ['http://host/connect/abc?x', 'http://host/connect/[token]'],
    ['/%E0%A4%A/connect', '/%E0%A4%A/connect'],
  ])('%s → %s', (url, expected) => {
    expect(loggableUrl(url)).toBe(expected);
  });
});

describe('redactHeaders', () => {
  it('censors credential headers by name, case-insensitively, and keeps the others', () => {
    expect(
      redactHeaders({
        Authorization: 'Bearer x',
        'PROXY-AUTHORIZATION': 'Basic y',
        'x-api-key': 'k',
        'Set-Cookie': ['a=1', 'b=2'],
        'X-Amz-Security-Token': 't',
        'X-CSRF-Token': 'c',
        'content-type': 'application/json',
        'Idempotency-Key': 'retry-1',
      }),
    ).toEqual({
      authorization: '[redacted]',
      'proxy-authorization': '[redacted]',
      'x-api-key': '[redacted]',
      'set-cookie': '[redacted]',
      'x-amz-security-token': '[redacted]',
      'x-csrf-token': '[redacted]',
      'content-type': 'application/json',
      'idempotency-key': 'retry-1',
    });
  });

  it('redacts headers given to a logger directly, and mixed-case secret fields', () => {
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'info' },
      { write: (line: string) => void lines.push(line) },
    );
    const hidden = secret('direct');
    logger.info({ headers: { 'Proxy-Authorization': hidden }, Authorization: hidden }, 'upstream');
    logger.info({ upstream: { headers: { 'X-Api-Key': hidden } } }, 'nested');
    expect(lines.join('\n')).not.toContain(hidden);
  });
});
