import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import { openApproval } from '../../activities/db/approvals.js';
import { approvalRequestedWebhook } from '../../workflows/webhook.js';
import {
  agentUnderPolicy,
  approvalIdOf,
  requestedEvents,
  startApprovalStack,
  tokenOf,
  type ApprovalStack,
} from '../approvals/approval-stack.js';
import type { CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { historyText } from '../support/workflow-history.js';
import { stopsAfterAll } from '../support/stops.js';

let approvals: ApprovalStack;
let stack: CallStack;
/** Governed by policy `named`, which asks alice and bob. */
let named: TestKey;

const started = stopsAfterAll();

beforeAll(async () => {
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  for (const user of ['u_named', 'u_anyone']) await stack.connect(user);
  named = await agentUnderPolicy(stack, 'named', {
    requested_from: ['alice', 'bob'],
    ttl_seconds: 3600,
  });
  // The default policy (agent test-agent) asks nobody in particular.
  await stack.setDefaults({ read: 'allow', write: 'ask', destructive: 'deny' });
});

interface LinkRow {
  approvalId: string;
  approver: string;
  channel: string | null;
  keyAgentId: string | null;
  tokenHash: Buffer;
  expiresAt: Date;
}

const linkRows = (approvalId: string) =>
  stack.db.sql<LinkRow[]>`
    select * from approval_links where approval_id = ${approvalId} order by approver`;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

describe('approval.requested', () => {
  it('is delivered when a call is held, with one link per requested decider, the same on every attempt', async () => {
    // The first attempt fails: Temporal delivers again, and the links must not change.
    approvals.receiver.answer([500, 200]);
    const input = { title: `named ${randomUUID()}` };
    const held = await stack.run('acme.create_task', { user: 'u_named', input }, { key: named });
    const approvalId = approvalIdOf(held);

    const { deliveries, events } = await requestedEvents(approvals, approvalId, 2);
    for (const delivery of deliveries) {
      expect(delivery.headers).toMatchObject({
        'webhook-id': `evt_${approvalId}_requested`,
        'webhook-signature': expect.stringMatching(/^v1,/),
      });
    }
    const [first, second] = events;
    if (!first || !second) throw new Error('expected two deliveries');
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    // The event carries the approval as GET shows it, but for `notifications`: what was sent to
    // approvers is the record's, and goes on changing after the event.
    const record = Object.fromEntries(
      Object.entries(view.body).filter(([field]) => field !== 'notifications'),
    );
    expect(first).toEqual({
      type: 'approval.requested',
      timestamp: view.body.created_at,
      data: {
        approval: record,
        links: ['alice', 'bob'].map((approver) => ({
          approver,
          url: expect.stringMatching(
            new RegExp(`^${stack.config.api.publicUrl}/approvals/review/[A-Za-z0-9_-]{43}$`),
          ),
          expires_at: view.body.expires_at,
        })),
      },
    });
    expect(first.data.approval).toMatchObject({
      id: approvalId,
      status: 'pending',
      action: 'acme.create_task',
      scope: 'write',
      agent_id: 'named-bot',
      user: 'u_named',
      requested_from: ['alice', 'bob'],
      request: { action: 'acme.create_task', user: 'u_named', input },
      policy: { id: 'named', version: 1, rule: expect.any(String) },
    });
    // A redelivery carries the very same links; each approver's link is its own.
    expect(second.data.links).toEqual(first.data.links);
    const [alice, bob] = first.data.links.map((link) => tokenOf(link.url));
    if (!alice || !bob) throw new Error('two links expected');
    expect(alice).not.toBe(bob);

    // Stored as hashes only: no column holds a token.
    const rows = await linkRows(approvalId);
    expect(
      rows.map((row) => [
        row.approver,
        row.tokenHash.equals(sha256(row.approver === 'alice' ? alice : bob)),
      ]),
    ).toEqual([
      ['alice', true],
      ['bob', true],
    ]);
    expect(rows.map((row) => row.expiresAt.toISOString())).toEqual([
      view.body.expires_at,
      view.body.expires_at,
    ]);
    const stored = JSON.stringify(
      await stack.db.sql`select * from approval_links where approval_id = ${approvalId}`,
    );
    const storedText = (
      await stack.db.sql<{ dump: string }[]>`
        select string_agg(l::text, ' ') as dump from approval_links l where approval_id = ${approvalId}`
    )[0]?.dump;
    for (const token of [alice, bob]) {
      expect(stored).not.toContain(token);
      expect(storedText).not.toContain(token);
      expect(storedText).not.toContain(Buffer.from(token, 'utf8').toString('hex'));
    }

    // No token travels through Temporal: not in the delivery's history nor in the call's.
    const [call] = await stack.db.sql<{ workflowId: string }[]>`
      select workflow_id from approvals where id = ${approvalId}`;
    if (!call) throw new Error('no approval row');
    const histories = [
      await historyText(stack.api.temporal, `webhook/approval.requested/${approvalId}`),
      await historyText(stack.api.temporal, call.workflowId),
    ];
    expect(histories[0]).toContain('answered 500');
    for (const text of [...histories, stack.api.logs.join('\n')]) {
      expect(text).not.toContain(alice);
      expect(text).not.toContain(bob);
    }
  });

  it('carries one generic link, for approver "role:approver", when the policy asks nobody in particular', async () => {
    approvals.receiver.answer([200]);
    const input = { title: `anyone ${randomUUID()}` };
    const approvalId = approvalIdOf(
      await stack.run('acme.create_task', { user: 'u_anyone', input }),
    );
    const { events } = await requestedEvents(approvals, approvalId);
    expect(events[0]?.data.approval).toMatchObject({
      id: approvalId,
      agent_id: 'test-agent',
      requested_from: [],
    });
    expect(events[0]?.data.links).toEqual([
      {
        approver: 'role:approver',
        url: expect.stringContaining(`${stack.config.api.publicUrl}/approvals/review/`),
        expires_at: events[0]?.data.approval.expires_at,
      },
    ]);
    // The endpoint was set with stack.key: its links record that key's agent (test-agent), so
    // they can never decide test-agent's own calls (test/approvals/decision-link-provenance).
    expect(
      (await linkRows(approvalId)).map((row) => [row.approver, row.channel, row.keyAgentId]),
    ).toEqual([['role:approver', 'webhook', 'test-agent']]);
  });

  it('delivers nothing and makes no link when the environment has no endpoint', async () => {
    const staging = await createTestKey(stack.db.sql, { env: 'staging', access: 'full' });
    const approval = await openApproval(stack.db.sql, {
      environmentId: staging.environmentId,
      fingerprint: randomUUID(),
      workflowId: `call/staging/${randomUUID()}`,
      action: 'acme.create_task',
      scope: 'write',
      agentId: 'billing-bot',
      userExternalId: 'u_123',
      requestedFrom: ['alice'],
      request: { input: { title: 'Pay invoice 42' } },
      policyId: 'default',
      policyVersion: 1,
      policyRule: 'defaults.write → ask',
      ttlSeconds: 3600,
    });
    const before = approvals.receiver.deliveries.length;
    const result = await stack.api.temporal.workflow.execute(approvalRequestedWebhook, {
      taskQueue: stack.config.temporal.taskQueue,
      workflowId: `webhook/approval.requested/${approval.id}`,
      args: [
        {
          environmentId: staging.environmentId,
          approvalId: approval.id,
          eventId: `evt_${approval.id}_requested`,
        },
      ],
    });
    expect(result).toBe('no_endpoint');
    expect(approvals.receiver.deliveries.length).toBe(before);
    expect(await linkRows(approval.id)).toEqual([]);
  });
});
