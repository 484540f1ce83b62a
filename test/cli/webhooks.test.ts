import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { findWebhookEndpointForDelivery } from '../../activities/db/webhook-endpoints.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { bearer, createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;
let env: Record<string, string>;
const encryptionKey = randomBytes(32).toString('base64');

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  // The CLI and the API share the encryption key, as an operator's processes do.
  api = started.add(
    await startTestApi(testConfig(db.url, { ENCRYPTION_KEY: encryptionKey }), db.sql),
  );
  env = { DATABASE_URL: db.url, ENCRYPTION_KEY: encryptionKey, WEBHOOK_ALLOW_PRIVATE: 'true' };
  await ensureEnvironment(db.sql, 'hooks');
});

describe('gatehouse webhooks', () => {
  it('sets an endpoint with a generated secret shown once, shows it and removes it', async () => {
    const set = await runCli(
      ['webhooks', 'set', '--env', 'hooks', '--url', 'https://example.com/hooks'],
      env,
    );
    expect(set).toMatchObject({ code: 0, stderr: '' });
    const secret = /^secret\s+(\S+)$/m.exec(set.stdout)?.[1] ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{43,}$/);
    expect(set.stdout).toMatch(/shown only once/);

    // Sealed with the key the worker has, under the environment it belongs to.
    const environment = await ensureEnvironment(db.sql, 'hooks');
    const config = testConfig(db.url, { ENCRYPTION_KEY: encryptionKey });
    // Set with no API key: the decision links delivered there record no agent (README, "Decision
    // links"), where an endpoint set through the API records its key's agent.
    expect(await findWebhookEndpointForDelivery(db.sql, config.encryption, environment.id)).toEqual(
      {
        url: 'https://example.com/hooks',
        secret,
        keyAgentId: null,
        auditEvents: false,
        auditDeliveredSeq: null,
      },
    );

    const shown = await runCli(['webhooks', 'show', '--env', 'hooks'], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^url\s+https:\/\/example\.com\/hooks$/m);
    expect(shown.stdout).toContain(`secret    …${secret.slice(-4)}\n`);
    expect(shown.stdout).not.toContain(secret);
    expect(shown.stdout).toMatch(/^audit\s+off$/m);

    // The API sees what the CLI set.
    const key = await createTestKey(db.sql, { env: 'hooks', access: 'read_only' });
    const viaApi = await fetch(`${api.url}/v1/webhook-endpoint`, { headers: bearer(key.key) });
    expect(await viaApi.json()).toMatchObject({
      url: 'https://example.com/hooks',
      secret_hint: `…${secret.slice(-4)}`,
      updated_by: 'cli',
    });

    const removed = await runCli(['webhooks', 'remove', '--env', 'hooks'], env);
    expect(removed).toMatchObject({ code: 0, stdout: 'removed the webhook endpoint of hooks\n' });
    expect((await runCli(['webhooks', 'show', '--env', 'hooks'], env)).stdout).toBe(
      '(no webhook endpoint)\n',
    );
    const again = await runCli(['webhooks', 'remove', '--env', 'hooks'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no webhook endpoint in environment "hooks"/);
  });

  it('takes a given secret without printing it', async () => {
    const secret = generateWebhookSecret();
    const set = await runCli(
      ['webhooks', 'set', '--env', 'hooks', '--url', 'http://127.0.0.1:9/h', '--secret', secret],
      env,
    );
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain(secret);
    expect(set.stdout).toContain(`…${secret.slice(-4)}`);
  });

  it.each([
    [
      ['webhooks', 'set', '--env', 'hooks', '--url', 'ftp://x.example'],
      /--url must be an http or https URL/,
    ],
    [
      [
        'webhooks',
        'set',
        '--env',
        'hooks',
        '--url',
        'https://x.example',
        '--secret',
        'whsec_short',
      ],
      /--secret must be whsec_/,
    ],
    [
      ['webhooks', 'set', '--env', 'nowhere', '--url', 'https://x.example'],
      /no environment "nowhere"/,
    ],
    [['webhooks', 'show', '--env', 'nowhere'], /no environment "nowhere"/],
    [['webhooks', 'set', '--env', 'hooks'], /required option '--url <url>'/],
  ])('refuses %j with a clear message', async (args, message) => {
    const result = await runCli(args, env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a loopback receiver unless private addresses are allowed', async () => {
    const result = await runCli(
      ['webhooks', 'set', '--env', 'hooks', '--url', 'http://127.0.0.1:9/h'],
      { ...env, WEBHOOK_ALLOW_PRIVATE: 'false' },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--url must not point at a loopback, private or link-local/);
  });

  it('needs the encryption key of the API and worker when given a database', async () => {
    const result = await runCli(['webhooks', 'show', '--env', 'hooks'], { DATABASE_URL: db.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ENCRYPTION_KEY: is required');
  });
});
