import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { GrantView } from '../../workflows/grant-types.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { AGENT, agentKey, approveWithGrant, createTask, setGrantPolicy } from './grant-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * GET /v1/grants and DELETE /v1/grants/{id}, under their own scopes; a key never
 * sees or revokes the grants of its own agent.
 */
let stack: CallStack;
let agent: TestKey;
/** The governed agent with a key that has both grant scopes: still blind to its own grants. */
let agentScoped: TestKey;
let grants: { ann: GrantView; anyone: GrantView; ended: GrantView };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await Promise.all(['u_ann', 'u_bob', 'u_cid'].map((user) => stack.connect(user)));
  agent = await agentKey(stack);
  agentScoped = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: AGENT,
    scopes: ['grants:read', 'grants:manage'],
  });
  await setGrantPolicy(stack, 3600);
  const ended = await approveWithGrant(stack, agent, 'u_cid', { for: 'user', seconds: 1 });
  const ann = await approveWithGrant(stack, agent, 'u_ann', { for: 'user', seconds: 600 });
  const anyone = await approveWithGrant(stack, agent, 'u_bob', { for: 'any_user', seconds: 900 });
  grants = { ann, anyone, ended };
  await sleep(Math.max(Date.parse(ended.expires_at) - Date.now(), 0) + 100);
});

async function list(query = '', key: TestKey = stack.approver) {
  const answer = await stack.request(key, 'GET', `/v1/grants${query}`);
  return {
    status: answer.status,
    body: answer.body,
    ids: ((answer.body.data as GrantView[] | undefined) ?? []).map((grant) => grant.id),
  };
}

describe('GET /v1/grants', () => {
  it('lists grants newest first, with their status', async () => {
    const { status, body, ids } = await list();
    expect(status).toBe(200);
    expect(ids).toEqual([grants.anyone.id, grants.ann.id, grants.ended.id]);
    const data = body.data as GrantView[];
    expect(data.map((grant) => grant.status)).toEqual(['active', 'active', 'expired']);
    expect(data[0]).toEqual({
      ...grants.anyone,
      status: 'active',
    });
    expect(body.cursor).toBeNull();
  });

  it('filters by agent, action, user (theirs and any user’s) and status', async () => {
    expect((await list(`?agent=${AGENT}`)).ids).toHaveLength(3);
    expect((await list('?agent=someone-else')).ids).toEqual([]);
    expect((await list('?action=acme.create_task')).ids).toHaveLength(3);
    expect((await list('?action=acme.update_task')).ids).toEqual([]);
    expect((await list('?user=u_ann')).ids).toEqual([grants.anyone.id, grants.ann.id]);
    expect((await list('?status=expired')).ids).toEqual([grants.ended.id]);
    expect((await list('?status=active&user=u_cid')).ids).toEqual([grants.anyone.id]);
  });

  it('pages with cursor', async () => {
    const first = await list('?limit=2');
    expect(first.ids).toEqual([grants.anyone.id, grants.ann.id]);
    const cursor = first.body.cursor as string;
    const second = await list(`?limit=2&cursor=${cursor}`);
    expect(second.ids).toEqual([grants.ended.id]);
    expect(second.body.cursor).toBeNull();
    expect((await list('?cursor=nonsense')).status).toBe(400);
    expect((await list('?status=forever')).status).toBe(400);
  });

  it('needs grants:read, which the standard keys agents call with lack', async () => {
    const denied = await list('', agent);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({
      code: 'insufficient_access',
      required_scope: 'grants:read',
    });
    const standard = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'a-backend',
    });
    expect((await list('', standard)).status).toBe(403);
  });

  it('hostile: the governed agent, even with the scopes, sees none of its own grants', async () => {
    const own = await list('', agentScoped);
    expect(own.status).toBe(200);
    expect(own.ids).toEqual([]);
    expect((await list(`?agent=${AGENT}`, agentScoped)).ids).toEqual([]);
  });
});

describe('DELETE /v1/grants/{id}', () => {
  it('hostile: the governed agent cannot revoke (or so much as find) its own grant', async () => {
    const answer = await stack.request(agentScoped, 'DELETE', `/v1/grants/${grants.ann.id}`);
    expect(answer.status).toBe(404);
    const plain = await stack.request(agent, 'DELETE', `/v1/grants/${grants.ann.id}`);
    expect(plain.status).toBe(403);
    expect(plain.body.error).toMatchObject({ required_scope: 'grants:manage' });
    expect((await list('?status=active')).ids).toContain(grants.ann.id);
  });

  it('revokes from the next call on, and answers a revoked grant as it is', async () => {
    const before = await createTask(stack, agent, 'u_ann');
    expect(before.status).toBe(200);

    const revoked = await stack.request(stack.approver, 'DELETE', `/v1/grants/${grants.ann.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({
      id: grants.ann.id,
      status: 'revoked',
      revoked_by: 'approver',
    });
    const again = await stack.request(stack.key, 'DELETE', `/v1/grants/${grants.ann.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);
    expect((await list('?status=revoked')).ids).toEqual([grants.ann.id]);

    // u_ann is still covered by the grant for any user: revoke that one too.
    await stack.request(stack.approver, 'DELETE', `/v1/grants/${grants.anyone.id}`);
    const after = await createTask(stack, agent, 'u_ann');
    expect(after.body.error).toMatchObject({ code: 'approval_required' });
  });

  it('answers 404 for an unknown grant and 400 for an id that is none', async () => {
    const unknown = await stack.request(stack.approver, 'DELETE', `/v1/grants/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    const bad = await stack.request(stack.approver, 'DELETE', '/v1/grants/not-an-id');
    expect(bad.status).toBe(400);
  });
});
