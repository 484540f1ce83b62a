import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import * as oauth from 'openid-client';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { listRoleMappings, setGroupRoles } from '../../activities/db/role-mappings.js';
import { listNotificationChannels } from '../../activities/db/notification-channels.js';
import { listNotificationRoutes } from '../../activities/db/notification-routes.js';
import { sendEmail } from '../../activities/notifications/send-email.js';
import { createSql } from '../../infra/database/client.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { encryptedDataConverter } from '../../infra/temporal/payload-codec.js';
import { healthCheck } from '../../workflows/health-check.js';
import { runCli } from '../support/cli.js';
import { signInAs } from '../support/identity-provider.js';
import {
  devDataFolder,
  spawnDev,
  stopDev,
  untilReady,
  type DevProcess,
} from '../support/dev-process.js';

const bin = fileURLToPath(new URL('../../infra/cli/bin.js', import.meta.url));

let dataDir: string;
const started: DevProcess[] = [];
/** Holds the API's preferred port, as another program would: the stack must say it moved. */
let blocker: Server;
let blockedPort: number;
/** Holds the preferred Postgres port across both starts: each must say Postgres moved. */
let postgresBlocker: Server;
let blockedPostgresPort: number;

/** Listens on a free loopback port, as another program would. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve((server.address() as { port: number }).port);
    });
  });
  return { server, port };
}

/** The banner's line for a service that had to leave its preferred port. */
function movedLine(running: DevProcess, service: string, preferred: number): string {
  const match = new RegExp(
    `^ {2}! Port ${String(preferred)} is taken by another program: the ${service} is on port (\\d+) instead\\.$`,
    'm',
  ).exec(running.output());
  if (!match) throw new Error(`no "!" line for the ${service} in:\n${running.output()}`);
  return match[0];
}

/** Starts `gatehouse dev` in its own data folder and waits for its banner. */
async function startDev(): Promise<DevProcess> {
  const dev = spawnDev({ dataDir });
  started.push(dev);
  await untilReady(dev, 90_000);
  return dev;
}

/** The banner's `export …` line: what the README's examples need. */
function exportLine(running: DevProcess): string {
  const match = /^ {2}(export GATEHOUSE_URL=.*)$/m.exec(running.output());
  if (!match?.[1]) throw new Error(`no export line in:\n${running.output()}`);
  return match[1];
}

/** What a second terminal gets from `eval "$(npx gatehouse env)"`, as the README says. */
async function evalGatehouseEnv(): Promise<string[]> {
  const script =
    'eval "$("$0" "$1" env)" && printf "%s\\n" "$GATEHOUSE_URL" "$AGENT_KEY" "$ADMIN_KEY" "$MAIL_URL"';
  const { stdout } = await promisify(execFile)('bash', ['-c', script, process.execPath, bin], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      GATEHOUSE_DATA_DIR: dataDir,
    },
  });
  return stdout.trim().split('\n');
}

/** Sends a JSON request with a key and reads the JSON answer. */
async function call(
  key: string,
  method: string,
  url: string,
  body?: object,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const errorCode = (answer: { body: Record<string, unknown> }) =>
  (answer.body.error as { code?: string } | undefined)?.code;

const LEGACY_KEY = 'gk_development_legacy-single-full-key';

interface DevState {
  developmentKey?: string;
  agentKey?: string;
  adminKey?: string;
  postgres: { password: string };
  identityProvider?: { port: number; clientId: string; clientSecret: string };
}

const readState = async () =>
  JSON.parse(await readFile(path.join(dataDir, 'local-state.json'), 'utf8')) as DevState;

/** The banner's line for one person of the sign-in part. */
function personLine(running: DevProcess, email: string): string {
  const match = new RegExp(`^ {16}${email.replaceAll('.', '\\.')} +groups: .*$`, 'm').exec(
    running.output(),
  );
  if (!match) throw new Error(`no line for ${email} in:\n${running.output()}`);
  return match[0].replace(/ {2,}/g, '  ').trim();
}

/**
 * Signs `email` in at the stack's sign-in provider as the console does, with the client the API
 * was given (its secret from the local state), and reads the ID token's claims.
 */
async function signInAtDevProvider(
  running: DevProcess,
  email: string,
): Promise<oauth.IDToken | undefined> {
  const { identityProvider: client } = await readState();
  if (!client) throw new Error('no identityProvider in the local state');
  const config = await oauth.discovery(
    new URL(running.field('Sign-in IdP')),
    client.clientId,
    client.clientSecret,
    undefined,
    // eslint-disable-next-line @typescript-eslint/no-deprecated
    { execute: [oauth.allowInsecureRequests] },
  );
  const verifier = oauth.randomPKCECodeVerifier();
  const state = oauth.randomState();
  const url = oauth.buildAuthorizationUrl(config, {
    redirect_uri: `${running.field('API')}/console/callback`,
    scope: 'openid email profile groups',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  const callback = await signInAs(url, email, {
    isDestination: (at) => at.pathname === '/console/callback',
  });
  const tokens = await oauth.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
  });
  return tokens.claims();
}

beforeAll(async () => {
  ({ server: blocker, port: blockedPort } = await holdPort());
  ({ server: postgresBlocker, port: blockedPostgresPort } = await holdPort());
  // The state file of a version that printed one full key and knew no sign-in provider: it
  // must still load.
  ({ dir: dataDir } = await devDataFolder(
    'gatehouse-dev-test-',
    {
      postgres: blockedPostgresPort,
      temporal: 7233,
      temporalUi: 8233,
      api: blockedPort,
      demoApp: 4010,
    },
    { developmentKey: LEGACY_KEY, identityProvider: undefined },
  ));
});

afterAll(async () => {
  for (const running of started) await stopDev(running);
  await rm(dataDir, { recursive: true, force: true });
  await new Promise((resolve) => blocker.close(resolve));
  await new Promise((resolve) => postgresBlocker.close(resolve));
});

describe('gatehouse dev', () => {
  it('starts everything, prints where it is, stops cleanly and keeps state across a restart', async () => {
    const first = await startDev();
    const apiUrl = first.field('API');
    const agentKey = first.field('Agent key');
    const adminKey = first.field('Admin key');
    const temporalAddress = first.field('Temporal');
    expect(first.field('API docs')).toBe(`${apiUrl}/docs`);
    expect(agentKey).toMatch(/^gk_development_/);
    expect(adminKey).toMatch(/^gk_development_/);
    expect(adminKey).not.toBe(agentKey);
    expect(first.output()).toContain(
      `Agent key     ${agentKey}   (standard: runs actions and the proxy as agent "demo-agent")`,
    );
    expect(first.output()).toContain(
      `Admin key     ${adminKey}   (full: management, policies and approval decisions, agent "admin")`,
    );
    // A taken port is replaced loudly, and the examples go by variables, not :3000.
    const apiPort = Number(new URL(apiUrl).port);
    expect(apiPort).not.toBe(blockedPort);
    expect(first.output()).toContain(
      `  ! Port ${blockedPort} is taken by another program: the API is on port ${apiPort} instead.`,
    );
    const postgresPort = Number(new URL(first.field('Postgres')).port);
    expect(postgresPort).not.toBe(blockedPostgresPort);
    expect(movedLine(first, 'Postgres', blockedPostgresPort)).toContain(
      `the Postgres is on port ${String(postgresPort)} instead.`,
    );
    expect(exportLine(first)).toBe(
      `export GATEHOUSE_URL=${apiUrl} AGENT_KEY=${agentKey} ADMIN_KEY=${adminKey} MAIL_URL=${first.field('Mail')}`,
    );
    expect(first.output()).toContain(
      'Try: curl -H "Authorization: Bearer $AGENT_KEY" "$GATEHOUSE_URL/v1/policies/default"',
    );
    expect(await runCli(['env'], { GATEHOUSE_DATA_DIR: dataDir })).toMatchObject({
      code: 0,
      stdout: `${exportLine(first)}\n`,
    });
    expect(await evalGatehouseEnv()).toEqual([apiUrl, agentKey, adminKey, first.field('Mail')]);
    expect(first.output()).not.toContain('API key');
    expect(first.output()).not.toContain(LEGACY_KEY);
    const state = await readState();
    expect(state).toMatchObject({ developmentKey: LEGACY_KEY, agentKey, adminKey });
    // What the older file lacked was added, the console's client at the sign-in provider.
    expect(state.identityProvider).toMatchObject({
      port: 4011,
      clientId: 'gatehouse-dev-console',
      clientSecret: expect.stringMatching(/^[\w-]{32}$/) as unknown,
    });

    // The sign-in part: the console, the dev provider's people with their groups and the roles
    // the seed mapped, and the one password.
    expect(first.field('Sign in')).toBe(`${apiUrl}/console/development`);
    expect(first.output()).toContain(
      `  Sign in       ${apiUrl}/console/development   (the console, as one of these people; password "demo" for all)`,
    );
    expect(personLine(first, 'alice@example.com')).toBe(
      'alice@example.com  groups: approvers  roles: approver',
    );
    expect(personLine(first, 'bob@example.com')).toBe(
      'bob@example.com  groups: finance  roles: approver',
    );
    expect(personLine(first, 'carol@example.com')).toBe(
      'carol@example.com  groups: approvers, finance  roles: approver',
    );
    expect(personLine(first, 'olivia@example.com')).toBe(
      'olivia@example.com  groups: operators  roles: operator, admin',
    );
    expect(personLine(first, 'nobody@example.com')).toBe(
      'nobody@example.com  groups: none  roles: none',
    );
    const issuer = first.field('Sign-in IdP');
    expect(issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.output()).toContain(
      `  Sign-in IdP   ${issuer}   (OpenID Connect, "Gatehouse dev sign-in": a development provider, the console its client)`,
    );
    // The API's client is registered there, with the console's callback under the API.
    expect(await signInAtDevProvider(first, 'alice@example.com')).toMatchObject({
      iss: issuer,
      sub: 'dev-alice',
      email: 'alice@example.com',
      email_verified: true,
      name: 'Alice Approver',
      groups: ['approvers'],
    });
    // The seed's role mappings are in the database; an operator's change outlives a restart.
    const postgresUrl = first.field('Postgres').replace('***', state.postgres.password);
    const sql = createSql(postgresUrl, { max: 1 });
    try {
      const development = await findEnvironmentByName(sql, 'development');
      if (!development) throw new Error('no development environment');
      expect(await listRoleMappings(sql, development.id)).toEqual([
        { group: 'approvers', roles: ['approver'] },
        { group: 'finance', roles: ['approver'] },
        { group: 'operators', roles: ['operator', 'admin'] },
      ]);
      await setGroupRoles(sql, development.id, 'finance', []);
      // The mail catcher: development's e-mail goes to its SMTP, and its page shows what came.
      const smtp = /sent to SMTP 127\.0\.0\.1:(\d+)\)$/m.exec(first.output())?.[1];
      expect(await listNotificationChannels(sql, development.id)).toEqual([
        expect.objectContaining({ kind: 'email', host: '127.0.0.1', port: Number(smtp) }),
      ]);
      // Everyone asked is e-mailed at their own address and in the approvers' mailbox, so a held
      // call reaches the catcher before anybody has signed in.
      expect(
        (await listNotificationRoutes(sql, development.id)).map(({ audience, kind, target }) => ({
          audience,
          kind,
          target,
        })),
      ).toEqual([
        { audience: '*', kind: 'email', target: { type: 'each_person' } },
        {
          audience: '*',
          kind: 'email',
          target: { type: 'address', address: 'approvers@gatehouse.localhost' },
        },
      ]);
      const [relay] = await listNotificationChannels(sql, development.id);
      if (relay?.kind !== 'email') throw new Error('no e-mail channel');
      await sendEmail(
        { ...relay, password: null },
        {
          from: { address: relay.senderAddress, name: relay.senderName },
          to: 'alice@example.com',
          subject: 'Caught by gatehouse dev',
          text: 'Hello',
          html: '<p>Hello</p>',
          messageId: '<caught@gatehouse.localhost>',
          headers: {},
        },
      );
      const mail = await fetch(first.field('Mail'));
      expect(mail.status).toBe(200);
      expect(await mail.text()).toContain('Caught by gatehouse dev');
    } finally {
      await sql.end({ timeout: 5 });
    }

    const unknown = await fetch(`${apiUrl}/v1/unknown`, {
      headers: { authorization: `Bearer ${agentKey}` },
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const anonymous = await fetch(`${apiUrl}/v1/unknown`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_api_key',
    );
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    expect((await fetch(first.field('Temporal UI'))).status).toBe(200);
    // The codec endpoint lets in the UI it started, with credentials, and no other port.
    const ui = new URL(first.field('Temporal UI')).origin;
    const preflight = async (origin: string) =>
      (
        await fetch(`${apiUrl}/codec/decode`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        })
      ).headers;
    expect((await preflight(ui)).get('access-control-allow-origin')).toBe(ui);
    expect((await preflight(ui)).get('access-control-allow-credentials')).toBe('true');
    const otherPort = `http://127.0.0.1:${String(Number(new URL(ui).port) + 1)}`;
    expect((await preflight(otherPort)).get('access-control-allow-origin')).toBeNull();
    const discovery = await fetch(`${first.field('Demo app')}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);

    const put = await call(adminKey, 'PUT', `${apiUrl}/v1/funded-access`, { enabled: true });
    expect(put.status).toBe(200);

    // Separation of duties: the admin key manages policy; the agent key may read it but not
    // change it, so a governed agent cannot switch its own governance off.
    const policies = await call(adminKey, 'GET', `${apiUrl}/v1/policies`);
    expect(policies.status).toBe(200);
    expect(policies.body.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'default' })]),
    );
    const policy = await call(agentKey, 'GET', `${apiUrl}/v1/policies/default`);
    expect(policy.status).toBe(200);
    // The body is the current policy, so a regression that lets this through changes nothing.
    const rewrite = await call(agentKey, 'PUT', `${apiUrl}/v1/policies/default`, {
      defaults: policy.body.defaults,
      rules: policy.body.rules,
    });
    expect(rewrite.status).toBe(403);
    expect(errorCode(rewrite)).toBe('insufficient_access');

    // The README's walk: the agent calls, its write is held, only the admin can decide it.
    const link = await call(agentKey, 'POST', `${apiUrl}/v1/connect/links`, {
      user: 'u_dev',
      app: 'acme',
    });
    expect(link.status).toBe(201);
    expect((await walkConnectLink(String(link.body.url), { username: 'u_dev' })).status).toBe(200);
    const run = (action: string, input: object) =>
      call(agentKey, 'POST', `${apiUrl}/v1/actions/${action}/run`, { user: 'u_dev', input });
    expect((await run('acme.list_tasks', {})).status).toBe(200);
    const held = await run('acme.create_task', { title: 'Ship the report' });
    expect(held.status).toBe(403);
    expect(errorCode(held)).toBe('approval_required');
    const approvalId = (held.body.error as { approval: { id: string } }).approval.id;
    // The CLI's decision link opens where the API runs, not on the preferred port, which
    // another program holds: it would have received the decision token.
    const linked = await runCli(['approvals', 'link', approvalId, '--env', 'development'], {
      GATEHOUSE_DATA_DIR: dataDir,
    });
    expect(linked).toMatchObject({ code: 0 });
    const decisionUrl = /^url +(\S+)$/m.exec(linked.stdout)?.[1] ?? '';
    expect(decisionUrl.startsWith(`${apiUrl}/`)).toBe(true);
    expect((await fetch(decisionUrl)).status).toBe(200);
    const own = await call(agentKey, 'POST', `${apiUrl}/v1/approvals/${approvalId}/approve`);
    expect(own.status).toBe(403);
    expect(errorCode(own)).toBe('insufficient_access');
    const view = await call(adminKey, 'GET', `${apiUrl}/v1/approvals/${approvalId}`);
    expect(view.body).toMatchObject({ data: { id: approvalId, status: 'pending' } });
    const approved = await call(adminKey, 'POST', `${apiUrl}/v1/approvals/${approvalId}/approve`);
    expect(approved).toEqual({
      status: 200,
      body: { id: approvalId, status: 'approved', decided_by: 'admin' },
    });
    // The README's policy example, as the admin writes it.
    const governed = await call(adminKey, 'PUT', `${apiUrl}/v1/policies/default`, {
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules: [
        { action: 'acme.delete_task', decision: 'deny' },
        { app: 'acme', scope: 'write', decision: 'ask' },
      ],
      approval: { requested_from: ['admin'], ttl_seconds: 86400 },
    });
    expect(governed).toEqual({
      status: 200,
      body: { id: 'default', version: 2, updated_by: 'admin' },
    });

    const connection = await Connection.connect({ address: temporalAddress });
    const workflowId = `health/${randomUUID()}`;
    try {
      // The worker seals its payloads: a client reads them with the stack's key.
      const { encryptionKey } = JSON.parse(
        await readFile(path.join(dataDir, 'local-state.json'), 'utf8'),
      ) as { encryptionKey: string };
      const client = new Client({
        connection,
        dataConverter: encryptedDataConverter({
          current: { id: 'k1', key: Buffer.from(encryptionKey, 'base64') },
        }),
      });
      await client.workflow.execute(healthCheck, { taskQueue: 'gatehouse', workflowId });
    } finally {
      await connection.close();
    }

    expect(await stopDev(first)).toBe(0);
    expect(first.output()).toContain('Stopped.');
    // The terminal stayed readable: no JSON records (the 4xx above are info, in the file), and
    // not the oidc-provider runtime notice decided upon in the README.
    expect(first.output()).not.toMatch(/^\{"level"/m);
    expect(first.output()).not.toContain('Unsupported runtime');
    const stopped = await runCli(['env'], { GATEHOUSE_DATA_DIR: dataDir });
    expect(stopped).toMatchObject({ code: 1, stdout: '' });
    expect(stopped.stderr).toContain('no gatehouse dev is running');

    const second = await startDev();
    try {
      // The preferred port is tried again, and a move is announced at every start.
      expect(movedLine(second, 'Postgres', blockedPostgresPort)).toContain(
        `the Postgres is on port ${new URL(second.field('Postgres')).port} instead.`,
      );
      expect(second.field('Agent key')).toBe(agentKey);
      expect(second.field('Admin key')).toBe(adminKey);
      // The finance group's roles, taken away before the restart, stay away: no second seed.
      expect(personLine(second, 'bob@example.com')).toBe(
        'bob@example.com  groups: finance  roles: none',
      );
      expect(personLine(second, 'alice@example.com')).toBe(
        'alice@example.com  groups: approvers  roles: approver',
      );
      // The same client, with the secret kept in the local state.
      expect((await readState()).identityProvider).toEqual(state.identityProvider);
      expect(await signInAtDevProvider(second, 'bob@example.com')).toMatchObject({
        sub: 'dev-bob',
        groups: ['finance'],
      });
      expect((await runCli(['env'], { GATEHOUSE_DATA_DIR: dataDir })).stdout).toBe(
        `${exportLine(second)}\n`,
      );
      const read = await call(agentKey, 'GET', `${second.field('API')}/v1/funded-access`);
      expect((read.body as { data: { enabled: boolean } }).data.enabled).toBe(true);
      const again = await Connection.connect({ address: second.field('Temporal') });
      try {
        const described = await new Client({ connection: again }).workflow
          .getHandle(workflowId)
          .describe();
        expect(described.status.name).toBe('COMPLETED');
      } finally {
        await again.close();
      }
    } finally {
      expect(await stopDev(second)).toBe(0);
    }
  }, 240_000);
});
