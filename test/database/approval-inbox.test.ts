// The console inbox's listing (activities/db/approval-inbox.ts), read in one statement: each row
// must be the approval exactly as findApproval reads it (its decisions gathered), and only the
// pending, unexpired approvals of the environment that ask the person, newest first.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { recordDecision } from '../../activities/calls/decision-records.js';
import { listInbox, type InboxFilters } from '../../activities/db/approval-inbox.js';
import {
  findApproval,
  openApproval,
  settleApproval,
  type Approval,
} from '../../activities/db/approvals.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

const started = stopsAfterAll();
let db: TestDatabase;
let environmentId: string;
const alice = { email: 'alice@example.com', groups: ['approvers'] };

/** The approvals opened, by name. */
const opened: Record<string, Approval> = {};

async function open(
  name: string,
  fields: {
    requestedFrom: string[];
    agentId?: string;
    user?: string;
    action?: string;
    ttlSeconds?: number;
    quorum?: number;
    environment?: string;
  },
): Promise<Approval> {
  const action = fields.action ?? 'acme.create_task';
  const approval = await openApproval(db.sql, {
    environmentId: fields.environment ?? environmentId,
    fingerprint: randomUUID(),
    workflowId: `call/inbox/${name}`,
    action,
    scope: 'write',
    agentId: fields.agentId ?? 'agent-a',
    userExternalId: fields.user ?? 'u_1',
    requestedFrom: fields.requestedFrom,
    request: { action, user: fields.user ?? 'u_1', via: 'api', input: { title: name } },
    policyId: 'default',
    policyVersion: 1,
    policyRule: 'defaults.write',
    ttlSeconds: fields.ttlSeconds ?? 3600,
    quorum: fields.quorum ?? 1,
  });
  opened[name] = approval;
  return approval;
}

const ids = (approvals: Approval[]) => approvals.map((approval) => approval.id);
const named = (...names: string[]) => names.map((name) => opened[name]?.id);
const inbox = (filters: InboxFilters = {}, limit = 50) =>
  listInbox(db.sql, environmentId, alice, filters, limit);

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  environmentId = (await ensureEnvironment(db.sql, 'inbox')).id;
  const other = (await ensureEnvironment(db.sql, 'elsewhere')).id;
  // Opened one after another: UUIDv7 ids, so each is newer than the one before.
  await open('group', { requestedFrom: ['group:approvers'] });
  await open('person', {
    requestedFrom: ['person:Alice@Example.COM'],
    agentId: 'agent-b',
    user: 'u_2',
    action: 'acme.delete_task',
  });
  await open('anyone', { requestedFrom: [], action: 'github.create_issue' });
  await open('finance', { requestedFrom: ['group:finance'] });
  await open('expired', { requestedFrom: ['group:approvers'], ttlSeconds: 0 });
  const rejected = await open('rejected', { requestedFrom: ['group:approvers'] });
  await settleApproval(db.sql, rejected.id, 'rejected', 'agent-z');
  await open('elsewhere', { requestedFrom: ['group:approvers'], environment: other });
  const halfway = await open('halfway', {
    requestedFrom: ['group:approvers', 'group:finance'],
    quorum: 2,
    agentId: 'agent-b',
  });
  const decided = await recordDecision(db.sql, {
    id: randomUUID(),
    approvalId: halfway.id,
    identity: 'approver-bot',
    label: 'approver-bot',
    decider: { kind: 'key', agentId: 'approver-bot' },
    decision: 'approve',
    at: Date.now(),
  });
  expect(decided.kind).toBe('recorded');
});

describe("a person's inbox", () => {
  it('lists what asks them (by group, by email in any case, or nobody), newest first, each row as findApproval reads it', async () => {
    const listed = await inbox();
    expect(ids(listed)).toEqual(named('halfway', 'anyone', 'person', 'group'));
    const found = await Promise.all(
      listed.map((approval) => findApproval(db.sql, environmentId, approval.id)),
    );
    expect(listed).toEqual(found);
    // The decision so far is gathered into its row, as findApproval gathers it.
    expect(listed[0]?.decisions.map((d) => [d.identity, d.decision])).toEqual([
      ['approver-bot', 'approve'],
    ]);
  });

  it('filters by agent, user, app and action, and pages by id', async () => {
    expect(ids(await inbox({ agentId: 'agent-b' }))).toEqual(named('halfway', 'person'));
    expect(ids(await inbox({ userExternalId: 'u_2' }))).toEqual(named('person'));
    expect(ids(await inbox({ app: 'github' }))).toEqual(named('anyone'));
    expect(ids(await inbox({ action: 'acme.delete_task' }))).toEqual(named('person'));
    const first = await inbox({}, 2);
    expect(ids(first)).toEqual(named('halfway', 'anyone'));
    expect(ids(await inbox({ before: first.at(-1)?.id ?? '' }, 2))).toEqual(
      named('person', 'group'),
    );
    expect(await inbox({ agentId: 'nobody' })).toEqual([]);
  });

  it('shows a person in no group only what names nobody', async () => {
    const nora = { email: 'nora@example.com', groups: [] };
    expect(ids(await listInbox(db.sql, environmentId, nora, {}, 50))).toEqual(named('anyone'));
  });
});
