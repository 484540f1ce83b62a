import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { prepareCallActivity } from '../../activities/calls/prepare-call.js';
import { connectClient } from '../../infra/temporal/connection.js';
import type { CallRequest } from '../../workflows/call-types.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import type { TestKey } from '../support/keys.js';
import {
  AGENT,
  agentKey,
  approveWithGrant,
  auditOf,
  createTask,
  setGrantPolicy,
} from './grant-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A grant made with an approval lets the agent's next calls of the same action run
 * without asking, for the user (or any user) it names, until its end or its revocation, and
 * never loosens a deny. Every call it lets through is audited with its id.
 */
let stack: CallStack;
let agent: TestKey;
let temporal: Client;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await Promise.all(
    ['u_ann', 'u_bob', 'u_cat', 'u_dan', 'u_eve'].map((user) => stack.connect(user)),
  );
  agent = await agentKey(stack);
  await setGrantPolicy(stack, 3600);
  temporal = await connectClient(stack.config.temporal, stack.config.encryption);
  started.push(() => temporal.connection.close());
});

describe('a grant for the user', () => {
  it('lets the same action for that user run without asking, audited with the grant id; another user is still asked', async () => {
    const grant = await approveWithGrant(stack, agent, 'u_ann', { for: 'user', seconds: 600 });
    expect(grant).toMatchObject({
      agent_id: AGENT,
      action: 'acme.create_task',
      scope: 'write',
      for: 'user',
      user: 'u_ann',
      created_by: 'approver',
      status: 'active',
    });
    expect(Date.parse(grant.expires_at) - Date.parse(grant.created_at)).toBe(600_000);

    for (let i = 0; i < 2; i++) {
      const ran = await createTask(stack, agent, 'u_ann');
      expect(ran.status).toBe(200);
      expect(ran.body).toMatchObject({ ok: true });
      const audit = await auditOf(stack, ran);
      expect(audit).toMatchObject({ decision: 'allowed', grantId: grant.id });
      // The row's reason is what the app answered; the policy's words are the preparation's.
      expect(audit.reason).toBe('app answered 201');
      const event = await stack.request(stack.key, 'GET', `/v1/audit?user=u_ann&limit=1`);
      expect((event.body.data as { grant_id?: string }[])[0]?.grant_id).toBe(grant.id);
    }

    const other = await createTask(stack, agent, 'u_bob');
    expect(other.body.error).toMatchObject({ code: 'approval_required' });
    expect((await auditOf(stack, other)).grantId).toBeNull();
  });
});

describe('a grant for any user', () => {
  it('lets the same action run for every user, and only that action', async () => {
    const grant = await approveWithGrant(stack, agent, 'u_cat', { for: 'any_user', seconds: 600 });
    expect(grant).toMatchObject({ for: 'any_user', user: null });
    const bob = await createTask(stack, agent, 'u_bob');
    expect(bob.status).toBe(200);
    expect(await auditOf(stack, bob)).toMatchObject({ decision: 'allowed', grantId: grant.id });

    // Another write of the same app is not the granted action.
    const update = await stack.run(
      'acme.update_task',
      { user: 'u_bob', input: { id: 't_none', title: 'renamed' } },
      { key: agent },
    );
    expect(update.body.error).toMatchObject({ code: 'approval_required' });

    // Revoked: the very next call asks again.
    const revoked = await stack.request(stack.key, 'DELETE', `/v1/grants/${grant.id}`);
    expect(revoked.body).toMatchObject({
      id: grant.id,
      status: 'revoked',
      revoked_by: 'test-agent',
    });
    const after = await createTask(stack, agent, 'u_bob');
    expect(after.body.error).toMatchObject({ code: 'approval_required' });
  });
});

describe('what a grant never does', () => {
  it('hostile: a live grant does not loosen a deny: a newer policy that denies the action wins', async () => {
    const grant = await approveWithGrant(stack, agent, 'u_cat', { for: 'user', seconds: 600 });
    await setGrantPolicy(stack, 3600, [{ action: 'acme.create_task', decision: 'deny' }]);
    try {
      const denied = await createTask(stack, agent, 'u_cat');
      expect(denied.status).toBe(403);
      expect(denied.body.error).toMatchObject({ code: 'denied_by_policy' });
      expect(await auditOf(stack, denied)).toMatchObject({ decision: 'denied', grantId: null });
    } finally {
      await setGrantPolicy(stack, 3600);
    }
    // Still live, the grant applies again once the policy asks rather than denies.
    const ran = await createTask(stack, agent, 'u_cat');
    expect(await auditOf(stack, ran)).toMatchObject({ decision: 'allowed', grantId: grant.id });
  });

  it('grants off (max_grant_seconds 0) stops the live grants from applying, as does a policy written before grants', async () => {
    const grant = await approveWithGrant(stack, agent, 'u_bob', { for: 'user', seconds: 600 });
    try {
      await setGrantPolicy(stack, 0);
      const off = await createTask(stack, agent, 'u_bob');
      expect(off.body.error).toMatchObject({ code: 'approval_required' });
      await setGrantPolicy(stack, undefined);
      const policy = await stack.request(stack.key, 'GET', '/v1/policies/granted');
      expect(policy.body.approval).toMatchObject({ max_grant_seconds: 0 });
      // A version stored before grants, without the field at all.
      await stack.db.sql`
        update policies set approval = approval - 'max_grant_seconds'
        where environment_id = ${stack.environmentId} and id = 'granted'`;
      const old = await createTask(stack, agent, 'u_bob');
      expect(old.body.error).toMatchObject({ code: 'approval_required' });
    } finally {
      await setGrantPolicy(stack, 3600);
    }
    const back = await createTask(stack, agent, 'u_bob');
    expect(await auditOf(stack, back)).toMatchObject({ decision: 'allowed', grantId: grant.id });
  });
});

describe('a grant ends exactly at its end, by the workflow clock', () => {
  it('hostile: a grant used after its end no longer applies (real workflow, a short grant)', async () => {
    // Short, but long enough that the call made while it lasts is made before its end on a
    // loaded machine too (with 2 s, a slow call outlived it); its end is then waited for.
    const grant = await approveWithGrant(stack, agent, 'u_dan', { for: 'user', seconds: 15 });
    const during = await createTask(stack, agent, 'u_dan');
    expect(await auditOf(stack, during)).toMatchObject({ decision: 'allowed', grantId: grant.id });
    const left = Date.parse(grant.expires_at) - Date.now();
    await sleep(Math.max(left, 0) + 300);
    const after = await createTask(stack, agent, 'u_dan');
    expect(after.body.error).toMatchObject({ code: 'approval_required' });
  });

  it('applies strictly before expires_at and not at it, whatever the host clock says (prepareCall at the workflow time given)', async () => {
    const grant = await approveWithGrant(stack, agent, 'u_eve', { for: 'user', seconds: 3600 });
    const end = Date.parse(grant.expires_at);
    const prepare = prepareCallActivity({ sql: stack.db.sql, temporal, config: stack.config });
    const call: CallRequest = {
      environmentId: stack.environmentId,
      environmentName: 'test',
      agentId: AGENT,
      userExternalId: 'u_eve',
      via: 'api',
      fingerprint: 'f'.repeat(64),
      target: {
        kind: 'action',
        action: 'acme.create_task',
        app: 'acme',
        scope: 'write',
        input: { title: 'at the edge' },
      },
      retryWindowSeconds: 3600,
    };
    const before = await prepare(call, [], end - 1);
    expect(before).toMatchObject({ ok: true, decision: 'allow', grantId: grant.id });
    expect((before as { reason: string }).reason).toBe(
      `policy granted v${String((before as { policyVersion: number }).policyVersion)}: defaults.write → ask; grant ${grant.id} (for user u_eve, until ${grant.expires_at}) → allow`,
    );
    const at = await prepare(call, [], end);
    expect(at).toMatchObject({ ok: true, decision: 'ask' });
    expect(at).not.toHaveProperty('grantId');
    // For another user, the same moment is judged by the policy alone.
    const other = await prepare({ ...call, userExternalId: 'u_dan' }, [], end - 1);
    expect(other).toMatchObject({ ok: true, decision: 'ask' });
  });
});
