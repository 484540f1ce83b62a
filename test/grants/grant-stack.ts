import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { GrantRequest, GrantView } from '../../workflows/grant-types.js';
import type { Answer, CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';

/** The agent these tests govern: a standard key, as agents call with, under its own policy. */
export const AGENT = 'granted-bot';

/** Writes the agent's policy: writes ask, deletes deny, grants up to `maxGrantSeconds`. */
export async function setGrantPolicy(
  stack: CallStack,
  maxGrantSeconds: number | undefined,
  rules: object[] = [],
): Promise<void> {
  const approval: Record<string, unknown> = { requested_from: [], ttl_seconds: 3600 };
  if (maxGrantSeconds !== undefined) approval.max_grant_seconds = maxGrantSeconds;
  const answer = await stack.request(stack.key, 'PUT', '/v1/policies/granted', {
    body: {
      name: 'Grants under test',
      agents: [AGENT],
      defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
      rules,
      approval,
    },
  });
  expect(answer.status).toBe(200);
}

export async function agentKey(stack: CallStack): Promise<TestKey> {
  return createTestKey(stack.db.sql, { env: 'test', access: 'standard', agentId: AGENT });
}

export function approvalIdOf(answer: Answer): string {
  const error = answer.body.error as { code?: string; approval?: { id: string } } | undefined;
  if (error?.code !== 'approval_required' || !error.approval) {
    throw new Error(`expected approval_required: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return error.approval.id;
}

/** A task creation with a title of its own: each one is a new call (a new fingerprint). */
export function createTask(stack: CallStack, key: TestKey, user: string): Promise<Answer> {
  return stack.run('acme.create_task', { user, input: { title: `task ${randomUUID()}` } }, { key });
}

/** Holds a call of the agent and approves it with `grant`, as the approver; answers the grant. */
export async function approveWithGrant(
  stack: CallStack,
  key: TestKey,
  user: string,
  grant: GrantRequest,
): Promise<GrantView> {
  const approvalId = approvalIdOf(await createTask(stack, key, user));
  const decided = await stack.request(
    stack.approver,
    'POST',
    `/v1/approvals/${approvalId}/approve`,
    {
      body: { grant },
    },
  );
  expect(decided.status).toBe(200);
  const made = decided.body.grant as GrantView | null;
  if (!made) throw new Error(`no grant made: ${JSON.stringify(decided.body)}`);
  return made;
}

export interface AuditRow {
  decision: string;
  reason: string | null;
  grantId: string | null;
}

/** The audit row of the call whose answer carried this trace id. */
export async function auditOf(stack: CallStack, answer: Answer): Promise<AuditRow> {
  const traceId = answer.headers.get('x-trace-id') ?? '';
  const [row]: [AuditRow?] = await stack.db.sql`
    select decision, reason, grant_id from audit_events where trace_id = ${traceId}`;
  if (!row) throw new Error(`no audit row for trace ${traceId}`);
  return row;
}
