import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { approvalLinkToken, hashLinkToken } from '../../activities/approvals/link-token.js';
import { openApproval, type Approval } from '../../activities/db/approvals.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import type { Config } from '../../infra/config.js';
import { holdApiPort, startTestApi } from '../support/api.js';
import { runCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let config: Config;
let env: Record<string, string>;
let environmentId: string;

const started = stopsAfterAll();

beforeAll(async () => {
  // Held before the configuration names it: the links the CLI prints must reach this API.
  const listening = started.add(await holdApiPort());
  db = started.add(await createTestDatabase());
  const encryptionKey = randomBytes(32).toString('base64');
  // The CLI, the API and the worker share the encryption key and the public URL.
  config = testConfig(db.url, {
    ENCRYPTION_KEY: encryptionKey,
    API_PORT: String(listening.port),
  });
  // The links point at PUBLIC_URL: this API answers there.
  started.add(await startTestApi(config, db.sql, { listening }));
  env = { DATABASE_URL: db.url, ENCRYPTION_KEY: encryptionKey, PUBLIC_URL: config.api.publicUrl };
  environmentId = (await ensureEnvironment(db.sql, 'ops')).id;
});

function pending(requestedFrom: string[]): Promise<Approval> {
  return openApproval(db.sql, {
    environmentId,
    fingerprint: randomUUID(),
    workflowId: `call/ops/${randomUUID()}`,
    action: 'acme.create_task',
    scope: 'write',
    agentId: 'billing-bot',
    userExternalId: 'u_123',
    requestedFrom,
    request: { action: 'acme.create_task', user: 'u_123', via: 'api', input: { title: 'x' } },
    policyId: 'default',
    policyVersion: 1,
    policyRule: 'defaults.write → ask',
    ttlSeconds: 3600,
  });
}

describe('gatehouse approvals link', () => {
  it('prints the link the webhook carries, stored as a hash, that opens the approval page', async () => {
    const approval = await pending(['alice', 'bob']);
    const made = await runCli(
      ['approvals', 'link', '--env', 'ops', approval.id, '--approver', 'bob'],
      env,
    );
    expect(made).toMatchObject({ code: 0, stderr: '' });
    const url = /^url\s+(\S+)$/m.exec(made.stdout)?.[1] ?? '';
    // Made for the CLI channel, with no key: not the token a webhook delivery carries.
    const token = approvalLinkToken(config.encryption, {
      approvalId: approval.id,
      approver: 'bob',
      channel: 'cli',
      keyAgentId: null,
    });
    expect(url).toBe(`${config.api.publicUrl}/approvals/review/${token}`);
    expect(token).not.toBe(
      approvalLinkToken(config.encryption, {
        approvalId: approval.id,
        approver: 'bob',
        channel: 'webhook',
        keyAgentId: null,
      }),
    );
    expect(made.stdout).toMatch(/^approver\s+bob$/m);
    expect(made.stdout).toContain(`expires   ${approval.expiresAt.toISOString()}`);

    const rows = await db.sql<
      { tokenHash: Buffer; approver: string; channel: string; keyAgentId: string | null }[]
    >`
      select token_hash, approver, channel, key_agent_id from approval_links
      where approval_id = ${approval.id}`;
    expect(rows).toEqual([
      { tokenHash: hashLinkToken(token), approver: 'bob', channel: 'cli', keyAgentId: null },
    ]);

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(
      '<span class="keep">billing-bot</span> asks to run <span class="keep">acme.create_task</span>',
    );
  });

  it('defaults to the generic link when the policy named no decider', async () => {
    const approval = await pending([]);
    const made = await runCli(['approvals', 'link', '--env', 'ops', approval.id], env);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^approver\s+role:approver$/m);
  });

  it.each([
    [['alice', 'bob'], [], /name the approver with --approver: this approval asks alice, bob/],
    [['alice'], ['--approver', 'mallory'], /"mallory \(decision link\)" is not among them/],
    [[], ['--approver', 'billing-bot'], /an agent can never decide its own approval/],
  ])('refuses a link that could not decide (asked %j, %j)', async (asked, extra, message) => {
    const approval = await pending(asked);
    const made = await runCli(['approvals', 'link', '--env', 'ops', approval.id, ...extra], env);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(message);
    expect(
      await db.sql`select 1 from approval_links where approval_id = ${approval.id}`,
    ).toHaveLength(0);
  });

  it('refuses an unknown approval', async () => {
    const made = await runCli(['approvals', 'link', '--env', 'ops', randomUUID()], env);
    expect(made.code).toBe(1);
    expect(made.stderr).toMatch(/no approval .* in environment "ops"/);
  });
});
