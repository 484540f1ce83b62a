/**
 * Two-person rules on the real stack: an approval that needs several different deciders stays
 * pending until the last of them approves, then the held call runs once; the same decider twice,
 * a decider not asked, the agent itself and the owner of one of the agent's keys are refused by
 * the API and again by the workflow's validator; one rejection rejects; a grant needs every
 * approver to ask for one. Persons are built as Decider objects, as the console builds them.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { encryptedDataConverter } from '../../infra/temporal/payload-codec.js';
import { testEnv } from '../support/stack-env.js';
import { installTestRuntime } from '../support/test-log.js';
import { randomUUID } from 'node:crypto';
import { recordDecision } from '../../activities/calls/decision-records.js';
import { decideApproval } from '../../api/approvals/decide.js';
import { InsufficientAccessError } from '../../api/errors.js';
import { callWorkflowsFor, type CallWorkflows } from '../../api/temporal/call-workflows.js';
import type { Decider } from '../../workflows/decider-rules.js';
import type { DecisionInput } from '../../workflows/call-types.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const ISSUER = 'https://idp.example.com';

function person(email: string, groups: string[], name = email.split('@')[0] ?? email): Decider {
  return {
    kind: 'person',
    issuer: ISSUER,
    subject: `sub-${email.toLowerCase()}`,
    name,
    email,
    groups,
    via: 'console',
  };
}

const alice = person('alice@example.com', ['finance'], 'Alice Adams');
const bob = person('bob@example.com', ['staff', 'finance'], 'Bob Brown');
const carol = person('carol@example.com', ['sales']);
/** In the finance group, and the owner of one of the two-person agent's keys. */
const mallory = person('mallory@example.com', ['finance']);

let stack: CallStack;
let calls: CallWorkflows;
/** Agent `two-person-bot`, governed by policy `two-person`: quorum 2. */
let agent: TestKey;
/** Deciders named by a bare name: keys of agents `fin-one` and `fin-two`. */
let finOne: TestKey;
let finTwo: TestKey;
/** A full key of agent `ops`, which `two-person` does not ask. */
let ops: TestKey;

const started = stopsAfterAll();

interface ApprovalRef {
  id: string;
}

function approvalOf(answer: Answer): ApprovalRef {
  const error = answer.body.error as { code: string; approval?: ApprovalRef } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(`expected approval_required, got ${answer.status} ${JSON.stringify(answer)}`);
  }
  return error.approval;
}

const codeOf = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;
const messageOf = (answer: Answer) =>
  (answer.body.error as { message?: string } | undefined)?.message ?? '';

async function titles(user: string): Promise<string[]> {
  const answer = await stack.run('acme.list_tasks', { user });
  return (answer.body.data as { tasks: { title: string }[] }).tasks.map((task) => task.title);
}

async function putPolicy(id: string, body: Record<string, unknown>): Promise<Answer> {
  return stack.request(stack.key, 'PUT', `/v1/policies/${id}`, { body });
}

const TWO_PERSON = {
  name: 'Two people approve every write',
  agents: ['two-person-bot'],
  defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
  approval: {
    requested_from: ['fin-one', 'fin-two', 'group:finance'],
    quorum: 2,
    ttl_seconds: 3600,
    max_grant_seconds: 3600,
  },
};

beforeAll(async () => {
  stack = started.add(await startCallStack());
  calls = callWorkflowsFor({
    temporal: stack.api.temporal,
    sql: stack.db.sql,
    config: stack.config,
  });
  agent = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'two-person-bot',
  });
  // The owner of the agent's key: set with SQL, as `gatehouse keys create --owner` would.
  await stack.db.sql`update api_keys set owner = 'Mallory@Example.com' where id = ${agent.id}`;
  finOne = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'fin-one' });
  finTwo = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'fin-two' });
  ops = await createTestKey(stack.db.sql, { env: 'test', access: 'full', agentId: 'ops' });
  expect((await putPolicy('two-person', TWO_PERSON)).status).toBe(200);
});

/** Holds a write of the two-person agent for a fresh user. */
async function holdWrite(
  user: string,
  title: string,
): Promise<{ id: string; run: () => Promise<Answer> }> {
  await stack.connect(user);
  const run = () => stack.run('acme.create_task', { user, input: { title } }, { key: agent });
  const held = approvalOf(await run());
  return { id: held.id, run };
}

const approve = (key: TestKey, id: string, body?: unknown) =>
  stack.request(key, 'POST', `/v1/approvals/${id}/approve`, body === undefined ? {} : { body });
const reject = (key: TestKey, id: string) =>
  stack.request(key, 'POST', `/v1/approvals/${id}/reject`);

function asPerson(decider: Decider, approvalId: string, decision: 'approve' | 'reject') {
  return decideApproval(stack.db.sql, calls, {
    environmentId: stack.environmentId,
    approvalId,
    decision,
    decider,
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<InsufficientAccessError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InsufficientAccessError);
  return error as InsufficientAccessError;
}

async function view(id: string): Promise<Record<string, unknown>> {
  const answer = await stack.request(stack.key, 'GET', `/v1/approvals/${id}`);
  expect(answer.status).toBe(200);
  return answer.body;
}

describe('an approval that needs two deciders', () => {
  it('stays pending after the first approval, then runs exactly once after the second', async () => {
    const title = `two keys ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_two_keys', title);
    expect(await view(id)).toMatchObject({
      status: 'pending',
      quorum: 2,
      approvals_needed: 2,
      decisions: [],
      decided_by: null,
    });

    const first = await approve(finOne, id);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id, status: 'pending', decided_by: null, approvals_needed: 1 });
    const between = await view(id);
    expect(between).toMatchObject({
      status: 'pending',
      approvals_needed: 1,
      decided_by: null,
      decided_at: null,
      decisions: [{ by: 'fin-one', decision: 'approve', via: 'api', at: expect.any(String) }],
    });

    // Not yet: the retry is still held, and nothing reached the app.
    const before = stack.acme.demo.stats().apiRequests;
    const early = await run();
    expect(codeOf(early)).toBe('approval_required');
    expect(stack.acme.demo.stats().apiRequests).toBe(before);

    // The same key again, either way, is refused before the workflow is asked.
    for (const again of [await approve(finOne, id), await reject(finOne, id)]) {
      expect(again.status).toBe(403);
      expect(codeOf(again)).toBe('insufficient_access');
      expect(messageOf(again)).toMatch(/"fin-one" has already decided this approval/);
    }

    const second = await approve(finTwo, id);
    expect(second.body).toEqual({ id, status: 'approved', decided_by: 'fin-two' });
    expect(await view(id)).toMatchObject({
      status: 'approved',
      approvals_needed: 0,
      decided_by: 'fin-two',
      decided_at: expect.any(String),
      decisions: [
        { by: 'fin-one', decision: 'approve' },
        { by: 'fin-two', decision: 'approve' },
      ],
    });

    const ran = await run();
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ ok: true, data: { title } });
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles('u_two_keys')).filter((t) => t === title)).toHaveLength(1);

    // The run's audit row names both approvers in its reason, inside the chained fields; the
    // event's view shows the approval's decisions.
    const [row] = await stack.db.sql<{ id: string; reason: string }[]>`
      select id, reason from audit_events
      where user_external_id = 'u_two_keys' and decision = 'allowed'
        and action = 'acme.create_task'`;
    expect(row?.reason).toMatch(/; approved by fin-one and fin-two$/);
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${row?.id ?? ''}`);
    expect(event.body).toMatchObject({
      reason: expect.stringContaining('approved by fin-one and fin-two'),
      approval: {
        id,
        status: 'approved',
        decisions: [
          { by: 'fin-one', decision: 'approve', via: 'api' },
          { by: 'fin-two', decision: 'approve', via: 'api' },
        ],
      },
    });
  });

  it('two persons of the group decide through decideApproval; names and identities are kept', async () => {
    const title = `two persons ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_two_persons', title);
    const first = await asPerson(alice, id, 'approve');
    expect(first).toMatchObject({ status: 'pending', approvals_needed: 1, decided_by: null });

    // The same person again, whatever the case of her email, is refused.
    const twice = await refusalOf(
      asPerson(person('ALICE@example.com', ['finance']), id, 'approve'),
    );
    expect(twice.message).toMatch(/already decided this approval.*cannot decide it twice/);

    const second = await asPerson(bob, id, 'approve');
    expect(second).toMatchObject({
      status: 'approved',
      approvals_needed: 0,
      decided_by: 'person:bob@example.com',
      decisions: [
        {
          by: 'person:alice@example.com',
          decision: 'approve',
          via: 'console',
          name: 'Alice Adams',
          issuer: ISSUER,
          subject: 'sub-alice@example.com',
        },
        {
          by: 'person:bob@example.com',
          decision: 'approve',
          via: 'console',
          name: 'Bob Brown',
          issuer: ISSUER,
          subject: 'sub-bob@example.com',
        },
      ],
    });
    const ran = await run();
    expect(ran.body).toMatchObject({ ok: true, data: { title } });
    expect((await titles('u_two_persons')).filter((t) => t === title)).toHaveLength(1);

    const [row] = await stack.db.sql<{ id: string; reason: string }[]>`
      select id, reason from audit_events
      where user_external_id = 'u_two_persons' and decision = 'allowed'
        and action = 'acme.create_task'`;
    expect(row?.reason).toMatch(/approved by person:alice@example.com and person:bob@example.com$/);
    const event = await stack.request(stack.key, 'GET', `/v1/audit/${row?.id ?? ''}`);
    expect(event.body).toMatchObject({
      approval: {
        decisions: [
          { by: 'person:alice@example.com', name: 'Alice Adams', issuer: ISSUER },
          { by: 'person:bob@example.com', name: 'Bob Brown', subject: 'sub-bob@example.com' },
        ],
      },
    });
  });

  it('refuses whoever may not decide, and the approval waits on untouched', async () => {
    const title = `refused ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_refused', title);

    const notAsked = await refusalOf(asPerson(carol, id, 'approve'));
    expect(notAsked.message).toMatch(
      /requested from "fin-one", "fin-two", "group:finance"; "person:carol@example.com" \(groups: sales\) is not among them/,
    );
    const owner = await refusalOf(asPerson(mallory, id, 'approve'));
    expect(owner.message).toMatch(
      /"person:mallory@example.com" owns an API key of agent "two-person-bot"/,
    );
    const byOps = await approve(ops, id);
    expect(byOps.status).toBe(403);
    expect(messageOf(byOps)).toMatch(/"ops" is not among them/);
    // The agent itself: its standard key lacks approvals:decide; as a decider it is refused too.
    const byAgent = await refusalOf(
      asPerson({ kind: 'key', agentId: 'two-person-bot' }, id, 'approve'),
    );
    expect(byAgent.message).toMatch(/never decide its own approval/);

    expect(await view(id)).toMatchObject({ status: 'pending', approvals_needed: 2, decisions: [] });
    expect(codeOf(await run())).toBe('approval_required');
    expect(await titles('u_refused')).not.toContain(title);
  });

  it('the workflow refuses them too, whatever sent the Update', async () => {
    const { id } = await holdWrite('u_direct_update', `direct ${String(Date.now())}`);
    const [row] = await stack.db.sql<{ workflowId: string }[]>`
      select workflow_id from approvals where id = ${id}`;
    const handle = stack.api.temporal.workflow.getHandle(row?.workflowId ?? '');
    const send = (input: Omit<DecisionInput, 'approvalId'>) =>
      handle.executeUpdate('decide', { args: [{ ...input, approvalId: id }] }).then(
        (decided) => ({ decided: decided as Record<string, unknown> }),
        (error: unknown) => ({ error }),
      );
    const refusedBy = async (input: Omit<DecisionInput, 'approvalId'>, reason: RegExp) => {
      const outcome = await send(input);
      expect('error' in outcome && outcome.error).toBeInstanceOf(WorkflowUpdateFailedError);
      const { error } = outcome as { error: WorkflowUpdateFailedError };
      expect(error.cause).toMatchObject({
        type: 'DeciderRefused',
        message: expect.stringMatching(reason),
      });
    };

    await refusedBy(
      { decision: 'approve', decidedBy: 'person:carol@example.com', decider: carol },
      /is not among them/,
    );
    await refusedBy(
      { decision: 'approve', decidedBy: 'person:mallory@example.com', decider: mallory },
      /owns an API key of agent "two-person-bot"/,
    );
    // A key whose agent id spells a person named: keys match bare names only.
    await refusedBy(
      {
        decision: 'approve',
        decidedBy: 'group:finance',
        decider: { kind: 'key', agentId: 'group:finance' },
      },
      /is not among them/,
    );
    await refusedBy({ decision: 'approve', decidedBy: 'two-person-bot' }, /never decide its own/);

    // An Update of the shape sent before deciders had kinds is a key's.
    const first = await send({ decision: 'approve', decidedBy: 'fin-one' });
    expect(first).toMatchObject({ decided: { status: 'pending', approvals_needed: 1 } });
    // The label comes from the decider, not from what the Update claims.
    await refusedBy(
      {
        decision: 'approve',
        decidedBy: 'someone else',
        decider: { kind: 'key', agentId: 'fin-one' },
      },
      /"fin-one" has already decided/,
    );
    const second = await send({ decision: 'approve', decidedBy: 'ignored', decider: alice });
    expect(second).toMatchObject({
      decided: { status: 'approved', decided_by: 'person:alice@example.com' },
    });
  });

  it('two decisions sent together are counted one after the other; the call runs once', async () => {
    const title = `together ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_together', title);
    const answers = await Promise.all([approve(finOne, id), approve(finTwo, id)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => a.body.status).sort()).toEqual(['approved', 'pending']);
    expect(await view(id)).toMatchObject({ status: 'approved', approvals_needed: 0 });
    const before = stack.acme.demo.stats().apiRequests;
    const retries = await Promise.all([run(), run(), run()]);
    expect(retries.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(stack.acme.demo.stats().apiRequests - before).toBe(1);
    expect((await titles('u_together')).filter((t) => t === title)).toHaveLength(1);
  });

  it('one rejection rejects, whatever approvals came before', async () => {
    const title = `rejected ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_one_no', title);
    expect((await approve(finOne, id)).body).toMatchObject({ status: 'pending' });
    const rejected = await asPerson(bob, id, 'reject');
    expect(rejected).toMatchObject({
      status: 'rejected',
      decided_by: 'person:bob@example.com',
      approvals_needed: 0,
      decisions: [
        { by: 'fin-one', decision: 'approve' },
        { by: 'person:bob@example.com', decision: 'reject' },
      ],
    });
    const late = await approve(finTwo, id);
    expect(late.status).toBe(409);
    const retry = await run();
    expect(retry.body.error).toMatchObject({
      code: 'denied_by_policy',
      approval: { id, status: 'rejected' },
    });
    expect(await titles('u_one_no')).not.toContain(title);
  });
});

describe('the history of an approval decided twice', () => {
  it('replays on today’s workflow code', async () => {
    const title = `replayed ${String(Date.now())}`;
    const { id, run } = await holdWrite('u_replayed', title);
    await asPerson(alice, id, 'approve');
    await approve(finOne, id, { grant: { for: 'user', seconds: 60 } });
    expect((await run()).status).toBe(200);
    const [row] = await stack.db.sql<{ workflowId: string }[]>`
      select workflow_id from approvals where id = ${id}`;
    const handle = stack.api.temporal.workflow.getHandle(row?.workflowId ?? '');
    await handle.result();
    installTestRuntime();
    await expect(
      Worker.runReplayHistory(
        {
          workflowBundle: { codePath: testEnv('workflowBundle') },
          dataConverter: encryptedDataConverter(stack.config.encryption),
        },
        await handle.fetchHistory(),
      ),
    ).resolves.toBe(undefined);
  });
});

describe('recording a decision', () => {
  it('written again (a local activity run anew) is the same decision; another one of the same identity is refused', async () => {
    const { id } = await holdWrite('u_recorded_twice', `recorded twice ${String(Date.now())}`);
    const record = {
      id: randomUUID(),
      approvalId: id,
      identity: 'person:alice@example.com',
      label: 'person:alice@example.com',
      decider: alice,
      decision: 'approve' as const,
      at: Date.now(),
    };
    const first = await recordDecision(stack.db.sql, record);
    expect(first).toMatchObject({ kind: 'recorded', approval: { status: 'pending' } });
    const again = await recordDecision(stack.db.sql, record);
    expect(again).toMatchObject({
      kind: 'recorded',
      approval: { status: 'pending', approvals_needed: 1 },
    });
    expect(again).not.toHaveProperty('settled');
    const other = await recordDecision(stack.db.sql, { ...record, id: randomUUID() });
    expect(other).toEqual({ kind: 'already_decided' });
    const rows = await stack.db.sql`select 1 from approval_decisions where approval_id = ${id}`;
    expect(rows).toHaveLength(1);
  });
});

describe('grants under a quorum', () => {
  const grantOf = async (approvalId: string) =>
    stack.db.sql<{ userExternalId: string | null; seconds: number; createdBy: string }[]>`
      select user_external_id, extract(epoch from expires_at - created_at)::int as seconds,
        created_by
      from grants where approval_id = ${approvalId}`;

  it('is made once the quorum is reached, the narrowest every approver asked', async () => {
    const { id } = await holdWrite('u_granted', `granted ${String(Date.now())}`);
    const first = await approve(finOne, id, { grant: { for: 'any_user', seconds: 1800 } });
    expect(first.body).toEqual({ id, status: 'pending', decided_by: null, approvals_needed: 1 });
    expect(await grantOf(id)).toEqual([]);
    const second = await approve(finTwo, id, { grant: { for: 'user', seconds: 3600 } });
    expect(second.body).toMatchObject({
      status: 'approved',
      grant: { for: 'user', user: 'u_granted', created_by: 'fin-one and fin-two' },
    });
    expect(await grantOf(id)).toEqual([
      { userExternalId: 'u_granted', seconds: 1800, createdBy: 'fin-one and fin-two' },
    ]);
  });

  it('is not made when one approver asked for none', async () => {
    const { id } = await holdWrite('u_not_granted', `not granted ${String(Date.now())}`);
    await approve(finOne, id, { grant: { for: 'user', seconds: 600 } });
    const second = await approve(finTwo, id);
    expect(second.body).toEqual({ id, status: 'approved', decided_by: 'fin-two' });
    expect(await grantOf(id)).toEqual([]);
  });
});

describe('a rule with its own approval settings', () => {
  it('holds the calls it matches under them; other calls keep the policy’s', async () => {
    const answer = await putPolicy('rule-approval', {
      agents: ['rule-approval-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
      rules: [
        {
          action: 'acme.delete_task',
          decision: 'ask',
          approval: { requested_from: ['fin-one', 'fin-two'], quorum: 2, ttl_seconds: 600 },
        },
      ],
      approval: { requested_from: ['fin-one'], ttl_seconds: 3600 },
    });
    expect(answer.status).toBe(200);
    const key = await createTestKey(stack.db.sql, {
      env: 'test',
      access: 'standard',
      agentId: 'rule-approval-bot',
    });
    await stack.connect('u_rule_approval');
    const write = approvalOf(
      await stack.run(
        'acme.create_task',
        { user: 'u_rule_approval', input: { title: 'by the policy' } },
        { key },
      ),
    );
    const destructive = approvalOf(
      await stack.run(
        'acme.delete_task',
        { user: 'u_rule_approval', input: { id: 't_missing' } },
        { key },
      ),
    );
    const [w, d] = [await view(write.id), await view(destructive.id)];
    expect(w).toMatchObject({ quorum: 1, requested_from: ['fin-one'] });
    expect(d).toMatchObject({
      quorum: 2,
      approvals_needed: 2,
      requested_from: ['fin-one', 'fin-two'],
    });
    const ttl = Date.parse(d.expires_at as string) - Date.parse(d.created_at as string);
    expect(ttl).toBe(600_000);
  });
});

describe('policy validation', () => {
  const issuesOf = (answer: Answer) =>
    (answer.body.error as { issues?: { path: string; message: string }[] }).issues ?? [];

  it.each<[string, Record<string, unknown>, string, RegExp]>([
    [
      'quorum 2 with one person named',
      { approval: { requested_from: ['person:a@x.com'], ttl_seconds: 60, quorum: 2 } },
      'approval.quorum',
      /quorum 2 needs 2 different deciders, but requested_from names only 1 \("person:a@x.com"\)/,
    ],
    [
      'quorum 3 with one person named twice and a key',
      {
        approval: {
          requested_from: ['person:a@x.com', 'person:A@X.com', 'admin'],
          ttl_seconds: 60,
          quorum: 3,
        },
      },
      'approval.quorum',
      /names only 2/,
    ],
    [
      'quorum 11',
      { approval: { requested_from: [], ttl_seconds: 60, quorum: 11 } },
      'approval.quorum',
      /10/,
    ],
    [
      'quorum 0',
      { approval: { requested_from: [], ttl_seconds: 60, quorum: 0 } },
      'approval.quorum',
      /1/,
    ],
    [
      'a person entry without an email',
      { approval: { requested_from: ['person:alice'], ttl_seconds: 60 } },
      'approval.requested_from.0',
      /person:<email>/,
    ],
    [
      'a role entry',
      { approval: { requested_from: ['role:approver'], ttl_seconds: 60 } },
      'approval.requested_from.0',
      /role: names no decider/,
    ],
    [
      'a rule of another decision with approval settings',
      { rules: [{ action: 'acme.create_task', decision: 'allow', approval: { quorum: 2 } }] },
      'rules.0.approval',
      /only a rule whose decision is ask/,
    ],
    [
      'a rule whose quorum its deciders cannot meet',
      {
        rules: [
          {
            action: 'acme.create_task',
            decision: 'ask',
            approval: { requested_from: ['admin', 'ops'], quorum: 3 },
          },
        ],
        approval: { requested_from: [], ttl_seconds: 60 },
      },
      'rules.0.approval.quorum',
      /names only 2/,
    ],
    [
      'a rule naming one decider under the policy’s quorum 2',
      {
        rules: [
          {
            action: 'acme.create_task',
            decision: 'ask',
            approval: { requested_from: ['person:a@x.com'] },
          },
        ],
        approval: { requested_from: ['group:finance'], ttl_seconds: 60, quorum: 2 },
      },
      'rules.0.approval.requested_from',
      /quorum 2 needs 2 different deciders/,
    ],
  ])('refuses %s', async (_what, extra, path, message) => {
    const body = { defaults: { read: 'allow', write: 'ask', destructive: 'deny' }, ...extra };
    for (const [method, url] of [
      ['PUT', '/v1/policies/invalid-quorum'],
      ['POST', '/v1/policies/invalid-quorum/simulate'],
    ] as const) {
      const answer = await stack.request(stack.key, method, url, { body });
      expect(answer.status).toBe(400);
      expect(codeOf(answer)).toBe('invalid_request');
      expect(issuesOf(answer)).toContainEqual({ path, message: expect.stringMatching(message) });
    }
    const stored = await stack.request(stack.key, 'GET', '/v1/policies/invalid-quorum');
    expect(stored.status).toBe(404);
  });

  it('checks a rule’s settings against the policy’s current ones when the body leaves them out', async () => {
    const id = 'quorum-kept';
    expect(
      (
        await putPolicy(id, {
          agents: ['quorum-kept-bot'],
          defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
          approval: { requested_from: ['admin', 'ops'], ttl_seconds: 60, quorum: 2 },
        })
      ).status,
    ).toBe(200);
    const body = {
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules: [
        {
          action: 'acme.create_task',
          decision: 'ask',
          approval: { requested_from: ['person:a@x.com'] },
        },
      ],
    };
    for (const [method, url] of [
      ['PUT', `/v1/policies/${id}`],
      ['POST', `/v1/policies/${id}/simulate`],
    ] as const) {
      const answer = await stack.request(stack.key, method, url, { body });
      expect(answer.status).toBe(400);
      expect(issuesOf(answer)).toEqual([
        {
          path: 'rules.0.approval.requested_from',
          message: expect.stringMatching(/quorum 2 needs 2 different deciders/),
        },
      ]);
    }
    expect((await stack.request(stack.key, 'GET', `/v1/policies/${id}`)).body).toMatchObject({
      version: 1,
      approval: { quorum: 2 },
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['a group with any quorum', { requested_from: ['group:finance'], ttl_seconds: 60, quorum: 5 }],
    ['nobody named with any quorum', { requested_from: [], ttl_seconds: 60, quorum: 10 }],
    [
      'as many deciders as the quorum',
      { requested_from: ['admin', 'person:a@x.com'], ttl_seconds: 60, quorum: 2 },
    ],
  ])('accepts %s', async (_what, approval) => {
    const answer = await putPolicy('valid-quorum', {
      agents: ['valid-quorum-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      approval,
    });
    expect(answer.status).toBe(200);
    const stored = await stack.request(stack.key, 'GET', '/v1/policies/valid-quorum');
    expect(stored.body).toMatchObject({ approval });
  });

  it('shows quorum 1 for a policy written without one', async () => {
    const answer = await putPolicy('no-quorum', {
      agents: ['no-quorum-bot'],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      approval: { requested_from: ['admin'], ttl_seconds: 60 },
    });
    expect(answer.status).toBe(200);
    const stored = await stack.request(stack.key, 'GET', '/v1/policies/no-quorum');
    expect(stored.body).toMatchObject({ approval: { requested_from: ['admin'], quorum: 1 } });
  });
});
