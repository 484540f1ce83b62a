import type { ApprovalView, DecisionView } from '../../workflows/call-types.js';

/** Approvals as the API shows them, for the chat message builders' tests. */

export const REVIEW_URL =
  'http://127.0.0.1:3000/approvals/review/gh_lnk_0123456789abcdefghijklmnopqrstuvwxyzABCDEF';

export function pendingApproval(overrides: Partial<ApprovalView> = {}): ApprovalView {
  return {
    id: '0198f2c4-7a1e-7c3b-9f21-5d0e8a6b4c12',
    status: 'pending',
    requested_from: ['group:approvers', 'group:finance'],
    action: 'acme.delete_task',
    scope: 'destructive',
    agent_id: 'demo-agent',
    user: 'u_123',
    request: {
      action: 'acme.delete_task',
      user: 'u_123',
      via: 'api',
      input: { id: 't_42', reason: 'duplicate' },
    },
    policy: { id: 'default', version: 2, rule: 'rule (app acme, scope destructive)' },
    created_at: '2026-03-02T09:30:00.000Z',
    expires_at: '2026-03-03T09:30:00.000Z',
    decided_by: null,
    decided_at: null,
    quorum: 2,
    decisions: [],
    approvals_needed: 2,
    ...overrides,
  };
}

export const aliceApproves: DecisionView = {
  by: 'person:alice@example.com',
  decision: 'approve',
  at: '2026-03-02T09:40:00.000Z',
  via: 'console',
  name: 'Alice Approver',
};

export const bobApproves: DecisionView = {
  by: 'person:bob@example.com',
  decision: 'approve',
  at: '2026-03-02T09:45:00.000Z',
  via: 'link',
  name: 'Bob Finance',
};

/** Settled by Bob's approval, the second of two. */
export function approvedApproval(): ApprovalView {
  return pendingApproval({
    status: 'approved',
    decided_by: 'person:bob@example.com',
    decided_at: bobApproves.at,
    decisions: [aliceApproves, bobApproves],
    approvals_needed: 0,
  });
}

/** Text that is markup, a mention, a masked link, controls and reordering marks, all at once. */
export const HOSTILE =
  '<!channel> & <https://evil.example|click here> *bold* [link](https://evil.example) \u202eevil\n' +
  'Second line\u0000\u2028';

/** Every value from the call as long and hostile as the API lets it be. */
export function hostileApproval(): ApprovalView {
  const long = (seed: string, length: number): string =>
    seed.repeat(Math.ceil(length / seed.length)).slice(0, length);
  const decisions: DecisionView[] = Array.from({ length: 10 }, (_, i) => ({
    by: `person:${long('&<>', 240)}${String(i)}@example.com`,
    decision: i === 9 ? 'reject' : 'approve',
    at: '2026-03-02T09:40:00.000Z',
    via: 'console',
    name: long('<&>', 255),
  }));
  return pendingApproval({
    agent_id: long(HOSTILE, 255),
    user: long(HOSTILE, 255),
    action: `acme.${long('x&<', 300)}`,
    requested_from: Array.from({ length: 20 }, (_, i) => `group:${long('&', 100)}${String(i)}`),
    policy: { id: long('&<', 200), version: 12, rule: long(HOSTILE, 1000) },
    request: {
      action: 'acme.delete_task',
      user: 'u',
      via: 'api',
      input: { notes: long(HOSTILE, 100_000), emoji: '😀'.repeat(3000) },
    },
    quorum: 10,
    decisions,
    approvals_needed: 1,
  });
}
