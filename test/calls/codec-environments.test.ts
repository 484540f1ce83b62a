import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Payload } from '@temporalio/common';
import { findApproval } from '../../activities/db/approvals.js';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import {
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  WORKFLOW_ID_METADATA,
  isEncrypted,
  sealedWorkflowId,
} from '../../infra/temporal/payload-codec.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { receiveWebhooks, type Receiver } from '../support/webhook-receiver.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { storedPayloads } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';
import { eventually } from '../support/eventually.js';

/**
 * A sealed payload names the workflow it belongs to, and the codec endpoint
 * opens it only for a key of that workflow's environment. The histories are Temporal's own, of
 * calls and connection workflows run for real in environment `test`; `other` is a second
 * environment of the same deployment, whose full key must read none of them.
 */
const mark = (what: string) => `${what}-${randomBytes(9).toString('hex')}`;

let stack: CallStack;
/** A full key of environment `other`. */
let stranger: TestKey;

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const toJson = (payload: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([name, value]) => [
      name,
      Buffer.from(value).toString('base64'),
    ]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

const fromJson = (json: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(json.metadata ?? {}).map(([name, value]) => [
      name,
      Buffer.from(value, 'base64'),
    ]),
  ),
  data: Buffer.from(json.data ?? '', 'base64'),
});

async function codec(path: 'decode' | 'encode', key: string, payloads: JsonPayload[]) {
  const response = await fetch(`${stack.api.url}/codec/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(key) },
    body: JSON.stringify({ payloads }),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

/** The sealed payloads of a workflow's history, each with the workflow it names. */
async function sealedOf(
  workflowId: string,
): Promise<{ json: JsonPayload; owner: string | null }[]> {
  const payloads = await storedPayloads(stack.api.temporal, workflowId);
  return payloads
    .filter(isEncrypted)
    .map((payload) => ({ json: toJson(payload), owner: sealedWorkflowId(payload) }));
}

/** The call workflow of a user, once visibility (eventually consistent) lists it. */
async function callWorkflowOf(user: string): Promise<string> {
  return eventually(
    `the call workflow of ${user}`,
    async () => {
      for await (const execution of stack.api.temporal.workflow.list({
        query: `WorkflowType = 'governedCall' AND GatehouseUser = '${user}'`,
      })) {
        return execution.workflowId;
      }
      return null;
    },
    250,
  );
}

function expectRefused(answer: { status: number; body: Record<string, unknown> }): void {
  expect(answer.status).toBe(404);
  expect(answer.body).toEqual({
    error: {
      code: 'not_found',
      message: expect.stringContaining('another environment') as unknown,
      retryable: false,
    },
  });
}

/** Opens for a key of `test` (with every secret of `secrets` readable), for no key of `other`. */
async function expectOpensForItsEnvironmentOnly(
  payloads: JsonPayload[],
  secrets: string[] = [],
): Promise<void> {
  const refused = await codec('decode', stranger.key, payloads);
  expectRefused(refused);
  for (const secret of secrets) expect(refused.text).not.toContain(secret);

  const opened = await codec('decode', stack.key.key, payloads);
  expect(opened.status).toBe(200);
  const decoded = (opened.body.payloads as JsonPayload[]).map(fromJson);
  expect(decoded.filter(isEncrypted)).toEqual([]);
  const text = decoded.map((payload) => Buffer.from(payload.data ?? []).toString('utf8')).join();
  for (const secret of secrets) expect(text).toContain(secret);
}

let held: { workflowId: string; approvalId: string; title: string };
let receiver: Receiver;

const started = stopsAfterAll();

beforeAll(async () => {
  // Connect links end at the callback of PUBLIC_URL: the call stack's API listens where it says.
  stack = started.add(await startCallStack());
  stranger = await createTestKey(stack.db.sql, { env: 'other', access: 'full', agentId: 'other' });
  // Approval webhooks are delivered (and their workflows started) only to an environment with an
  // endpoint: this one has one, so its webhook workflows' payloads can be read here.
  ({ receiver } = await receiveWebhooks(stack));
  started.add(receiver);
});

describe('sealed payloads and environments', () => {
  it('names its own workflow in every sealed payload of a call, and opens for its environment only', async () => {
    await stack.connect('u_codec_env');
    await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
    const read = await stack.run('acme.list_tasks', { user: 'u_codec_env' });
    expect(read.status).toBe(200);
    const readWorkflow = await callWorkflowOf('u_codec_env');
    expect(readWorkflow).toMatch(/^call\/test\/acme\.list_tasks\//);

    const title = mark('held-title');
    const asked = await stack.run('acme.create_task', { user: 'u_codec_env', input: { title } });
    const approvalId = (asked.body.error as { approval: { id: string } }).approval.id;
    const approved = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approvalId}/approve`,
    );
    expect(approved.status).toBe(200);
    const ran = await stack.run('acme.create_task', { user: 'u_codec_env', input: { title } });
    expect(ran.status).toBe(200);
    const approval = await findApproval(stack.db.sql, stack.environmentId, approvalId);
    if (!approval) throw new Error('no approval');
    held = { workflowId: approval.workflowId, approvalId, title };

    for (const workflowId of [readWorkflow, held.workflowId]) {
      const sealed = await sealedOf(workflowId);
      expect(sealed.length).toBeGreaterThan(2);
      for (const { owner } of sealed) {
        // The call's own payloads, or those of the webhook workflows it started (their input).
        const ownsIt =
          owner === workflowId ||
          owner === `webhook/approval.requested/${approvalId}` ||
          owner === `webhook/approval.decided/${approvalId}`;
        expect({ owner, ownsIt }).toEqual({ owner, ownsIt: true });
      }
    }
    await expectOpensForItsEnvironmentOnly(
      (await sealedOf(held.workflowId)).map(({ json }) => json),
      [title],
    );
    await expectOpensForItsEnvironmentOnly((await sealedOf(readWorkflow)).map(({ json }) => json));
  });

  it('opens the payloads of connect, refresh, revoke and webhook workflows for their environment only', async () => {
    // connect/<attempt>: the hosted flow, walked as a browser would.
    const link = await stack.request(stack.key, 'POST', '/v1/connect/links', {
      body: { user: 'u_codec_flow', app: 'acme' },
    });
    expect(link.status).toBe(201);
    const walked = await walkConnectLink(String(link.body.url), { username: 'u_codec_flow' });
    expect(walked.status).toBe(200);
    const [attempt]: [{ id: string }?] = await stack.db.sql`
      select id from oauth_attempts where link_id = ${String(link.body.id)}`;
    const [connection]: [{ id: string }?] = await stack.db.sql`
      select c.id from connections c join connected_users u on u.id = c.connected_user_id
      where u.external_id = 'u_codec_flow'`;
    if (!attempt || !connection) throw new Error('the connect flow left no attempt or connection');

    // refresh/<connection>: the app no longer knows the access token, so a call refreshes it.
    const seeded = await stack.connect('u_codec_refresh');
    await stack.forgetAccessToken(seeded);
    expect((await stack.run('acme.list_tasks', { user: 'u_codec_refresh' })).status).toBe(200);

    // revoke/<connection>
    const revoked = await stack.request(stack.key, 'DELETE', `/v1/connections/${connection.id}`);
    expect(revoked.status).toBe(200);

    const workflows = [
      `connect/${attempt.id}`,
      `refresh/${seeded.connection.id}`,
      `revoke/${connection.id}`,
      `webhook/approval.requested/${held.approvalId}`,
      `webhook/approval.decided/${held.approvalId}`,
    ];
    for (const workflowId of workflows) {
      const sealed = await sealedOf(workflowId);
      expect({ workflowId, sealed: sealed.length > 0 }).toEqual({ workflowId, sealed: true });
      for (const { owner } of sealed) expect(owner).toBe(workflowId);
      await expectOpensForItsEnvironmentOnly(sealed.map(({ json }) => json));
    }
    // One request with all of them: one lookup per kind, the same verdicts.
    const all = (await Promise.all(workflows.map(sealedOf))).flat().map(({ json }) => json);
    await expectOpensForItsEnvironmentOnly(all);
  });

  it('opens a deleted user’s workflows for nobody once the user’s records are gone', async () => {
    await stack.connect('u_codec_deleted');
    const [user]: [{ id: string }?] = await stack.db.sql`
      select id from connected_users where external_id = 'u_codec_deleted'`;
    if (!user) throw new Error('no user');
    const deleted = await stack.request(stack.key, 'DELETE', '/v1/users/u_codec_deleted');
    expect(deleted.status).toBe(200);
    const sealed = await sealedOf(`delete-user/${user.id}`);
    expect(sealed.length).toBeGreaterThan(0);
    for (const { owner } of sealed) expect(owner).toBe(`delete-user/${user.id}`);
    const payloads = sealed.map(({ json }) => json);
    expectRefused(await codec('decode', stranger.key, payloads));
    expectRefused(await codec('decode', stack.key.key, payloads));
  });

  it('does not open a payload relabelled with a workflow of the reader’s environment', async () => {
    const [sealed] = await sealedOf(held.workflowId);
    if (!sealed) throw new Error('no payload');
    const relabel = (owner: string): JsonPayload => ({
      ...sealed.json,
      metadata: {
        ...sealed.json.metadata,
        [WORKFLOW_ID_METADATA]: Buffer.from(owner).toString('base64'),
      },
    });
    // A stranger claims it for a call of its own environment: the label checks out, the seal not.
    const claimed = await codec('decode', stranger.key, [
      relabel('call/other/acme.create_task/forged'),
    ]);
    expect(claimed.status).toBe(400);
    expect(claimed.body).toEqual({
      error: expect.objectContaining({ code: 'invalid_request' }) as unknown,
    });
    expect(claimed.text).not.toContain(held.title);
    // Within its own environment, another workflow's name does not open it either.
    const moved = await codec('decode', stack.key.key, [relabel('call/test/acme.list_tasks/x')]);
    expect(moved.status).toBe(400);
  });

  it('opens no payload that names no workflow: sealed in format 2, or encoded by an operator', async () => {
    const secret = mark('unowned');
    const plain: JsonPayload = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from(JSON.stringify({ secret })).toString('base64'),
    };
    // Format 2, from before payloads named their workflow, sealed under this stack's key as the
    // codec then did.
    const { id, key } = stack.config.encryption.current;
    const salt = randomBytes(32);
    const iv = randomBytes(12);
    const derived = Buffer.from(
      hkdfSync('sha256', key, salt, Buffer.from('gatehouse/temporal-payload/v2'), 32),
    );
    const cipher = createCipheriv('aes-256-gcm', derived, iv);
    cipher.setAAD(Buffer.from(`gatehouse/temporal-payload/v1:${id}`));
    const metadataJson = Buffer.from(JSON.stringify(plain.metadata));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(metadataJson.length);
    const body = Buffer.concat([
      cipher.update(Buffer.concat([length, metadataJson, Buffer.from(plain.data ?? '', 'base64')])),
      cipher.final(),
    ]);
    const formatTwo: JsonPayload = {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING).toString('base64'),
        [KEY_ID_METADATA]: Buffer.from(id).toString('base64'),
      },
      data: Buffer.concat([Buffer.of(2), salt, iv, body, cipher.getAuthTag()]).toString('base64'),
    };
    expectRefused(await codec('decode', stack.key.key, [formatTwo]));

    const encoded = await codec('encode', stack.key.key, [plain]);
    expect(encoded.status).toBe(200);
    const [sealed] = encoded.body.payloads as JsonPayload[];
    if (!sealed) throw new Error('nothing encoded');
    expect(sealedWorkflowId(fromJson(sealed))).toBeNull();
    for (const reader of [stack.key.key, stranger.key]) {
      const answer = await codec('decode', reader, [sealed]);
      expectRefused(answer);
      expect(answer.text).not.toContain(secret);
    }
    // One such payload in a request refuses the whole request; clear payloads alone pass.
    const [own] = await sealedOf(held.workflowId);
    expectRefused(await codec('decode', stack.key.key, [own?.json ?? {}, sealed]));
    expect((await codec('decode', stranger.key, [plain])).body).toEqual({ payloads: [plain] });
  });

  it('answers no cross-origin request while no Temporal UI origin is configured', async () => {
    expect(stack.config.temporal.uiOrigin).toBeNull();
    for (const origin of ['http://127.0.0.1:8233', 'http://127.0.0.1:3001']) {
      const preflight = await fetch(`${stack.api.url}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
});
