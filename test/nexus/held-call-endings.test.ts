import { beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { revokeApiKey } from '../../activities/db/api-keys.js';
import { gatehouseFailure } from '../../workflows/nexus/gatehouse-failure.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { startCallerStack, type CallerStack } from './caller-stack.js';
import { failureOf, operationFixture } from './operation-fixture.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * README "Call Gatehouse from your Temporal workflows (Nexus)", the table of failures (issue
 * 23.3): a held `runAction` that is not approved ends as its approval does, and nothing runs. A
 * rejection fails `denied_by_policy`, an approval nobody decides fails `approval_expired`, and a
 * key revoked while the call waits fails the operation's next request `invalid_api_key`.
 */

const USER = 'u_nexus_endings';
const AGENT = 'nexus-endings';

let stack: CallStack;
let seeded: SeededConnection;
let caller: CallerStack;
let fixture: ReturnType<typeof operationFixture>;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  seeded = await stack.connect(USER);
  const key = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: AGENT,
  });
  caller = started.add(await startCallerStack(stack.config, key.key));
  fixture = operationFixture(stack, seeded, AGENT);
}, 120_000);

const title = (what: string) => `Nexus ${what} ${randomBytes(4).toString('hex')}`;

/** The ApplicationFailure the caller's workflow met, with its Gatehouse code. */
async function refusalOf(handle: Awaited<ReturnType<typeof fixture.startCaller>>) {
  const cause = await failureOf(handle);
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  return gatehouseFailure(cause);
}

describe('gatehouse.runAction when the held call is not approved', () => {
  it('fails denied_by_policy when the approver rejects, and the call never runs', async () => {
    const rejected = title('rejected');
    const handle = await fixture.startCaller({ title: rejected }, caller);
    const approval = await fixture.pendingApprovalFor(rejected);
    const decided = await stack.request(
      stack.approver,
      'POST',
      `/v1/approvals/${approval.id}/reject`,
    );
    expect(decided.status).toBe(200);

    const failure = await refusalOf(handle);
    expect(failure).toMatchObject({
      code: 'denied_by_policy',
      error: { code: 'denied_by_policy' },
    });
    expect(await fixture.tasksAtTheApp(rejected)).toBe(0);
    expect(await fixture.approvalStatus(approval.id)).toBe('rejected');
  });

  it('fails approval_expired when nobody decides before the approval expires', async () => {
    const defaults = { read: 'allow', write: 'ask', destructive: 'ask' };
    await stack.setDefaults(defaults, { approval: { requested_from: [], ttl_seconds: 2 } });
    try {
      const lapsed = title('expired');
      const handle = await fixture.startCaller({ title: lapsed }, caller);
      const approval = await fixture.pendingApprovalFor(lapsed, true);

      const failure = await refusalOf(handle);
      expect(failure).toMatchObject({
        code: 'approval_expired',
        error: { code: 'approval_expired', approval: { id: approval.id, status: 'expired' } },
      });
      expect(await fixture.approvalStatus(approval.id)).toBe('expired');
      // Too late to decide: the call is over, and an approve cannot run it.
      const late = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${approval.id}/approve`,
      );
      expect(late.status).toBe(409);
      expect(await fixture.tasksAtTheApp(lapsed)).toBe(0);
    } finally {
      await stack.setDefaults(defaults, { approval: { requested_from: [], ttl_seconds: 86400 } });
    }
  });

  it('fails invalid_api_key at its next request once its key is revoked while it waits', async () => {
    // A key of its own: revoking it must not touch the other tests' caller.
    const agent = 'nexus-revoked';
    const key = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: agent,
    });
    const revokable = await startCallerStack(stack.config, key.key);
    const own = operationFixture(stack, seeded, agent);
    try {
      const waiting = title('revoked');
      const handle = await own.startCaller({ title: waiting }, revokable);
      const approval = await own.pendingApprovalFor(waiting);
      expect(await revokeApiKey(stack.db.sql, key.id)).toBe(true);
      // The decision wakes the operation, whose request for the approved call meets the revoked key.
      const decided = await stack.request(
        stack.approver,
        'POST',
        `/v1/approvals/${approval.id}/approve`,
      );
      expect(decided.status).toBe(200);

      const failure = await refusalOf(handle);
      expect(failure?.code).toBe('invalid_api_key');
      expect(failure?.message).toContain('revoked');
      expect(failure?.message).not.toContain(key.key);
      expect(await own.tasksAtTheApp(waiting)).toBe(0);
    } finally {
      await revokable.stop();
    }
  });
});
