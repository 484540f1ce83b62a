import { beforeAll, describe, expect, it } from '@jest/globals';
import { approvalSettingsIssues } from '../../api/policies/approval-settings.js';
import { approvalSettings, type ApprovalSettings } from '../../workflows/policy.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase } from '../support/database.js';
import { bearer, createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * Reminders and escalation as policy settings: refused where they could never happen (at or after
 * the expiry) or could not be followed (escalation with one of its two fields), merged from an
 * asking rule as one setting, and kept by a policy through the API.
 */

const policy: ApprovalSettings = { requested_from: ['group:approvers'], ttl_seconds: 3600 };

describe('approvalSettingsIssues: reminders and escalation', () => {
  it.each([
    [{ remind_after_seconds: 600 }, []],
    [{ remind_after_seconds: 3600 }, ['approval.remind_after_seconds']],
    [{ escalate_after_seconds: 600, escalate_to: ['group:leads'] }, []],
    [{ escalate_after_seconds: 600 }, ['approval.escalate_to']],
    [{ escalate_to: ['group:leads'] }, ['approval.escalate_after_seconds']],
    [
      { escalate_after_seconds: 7200, escalate_to: ['group:leads'] },
      ['approval.escalate_after_seconds'],
    ],
  ])('%j → %j', (settings, paths) => {
    const issues = approvalSettingsIssues({ ...policy, ...settings }, []);
    expect(issues.map((issue) => issue.path)).toEqual(paths);
  });

  it("judges a rule's settings merged with the policy's, under the rule's path", () => {
    const issues = approvalSettingsIssues({ ...policy, remind_after_seconds: 1800 }, [
      { decision: 'ask', approval: { ttl_seconds: 600 } },
    ]);
    // The policy's reminder comes after the rule's shorter expiry.
    expect(issues).toEqual([
      { path: 'rules.0.approval.remind_after_seconds', message: expect.stringMatching(/ttl/) },
    ]);
  });

  it("takes a rule's escalation whole, never half of it from the policy", () => {
    const merged = approvalSettings(
      { ...policy, escalate_after_seconds: 600, escalate_to: ['group:leads'] },
      { escalate_to: ['group:directors'] },
    );
    expect(merged.escalate_to).toEqual(['group:directors']);
    expect(merged.escalate_after_seconds).toBeUndefined();
    expect(approvalSettingsIssues(merged, [])).toEqual([
      { path: 'approval.escalate_after_seconds', message: expect.any(String) },
    ]);
  });
});

describe('a policy with reminders and escalation, through the API', () => {
  const started = stopsAfterAll();
  let api: TestApi;
  let admin: TestKey;

  beforeAll(async () => {
    const db = started.add(await createTestDatabase());
    api = started.add(await startTestApi(testConfig(db.url), db.sql));
    admin = await createTestKey(db.sql, { env: 'notices', access: 'full' });
  });

  const put = (body: unknown) =>
    fetch(`${api.url}/v1/policies/chasing`, {
      method: 'PUT',
      headers: { ...bearer(admin.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const base = { defaults: { read: 'allow', write: 'ask', destructive: 'deny' } };

  it('keeps them, and answers them back', async () => {
    const approval = {
      requested_from: ['group:approvers'],
      ttl_seconds: 86400,
      remind_after_seconds: 3600,
      escalate_after_seconds: 14400,
      escalate_to: ['group:finance-leads'],
    };
    const saved = await put({ ...base, approval });
    expect(saved.status).toBe(200);
    const read = await fetch(`${api.url}/v1/policies/chasing`, { headers: bearer(admin.key) });
    const body = (await read.json()) as {
      approval?: Record<string, unknown>;
      data?: { approval: Record<string, unknown> };
    };
    expect(body.data?.approval ?? body.approval).toMatchObject(approval);
  });

  it('refuses a reminder after the expiry with a 400 naming the field', async () => {
    const refused = await put({
      ...base,
      approval: { requested_from: [], ttl_seconds: 600, remind_after_seconds: 900 },
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as {
      error: { code: string; issues: { path: string; message: string }[] };
    };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.issues).toEqual([
      { path: 'approval.remind_after_seconds', message: expect.stringMatching(/ttl_seconds/) },
    ]);
  });

  it('refuses an escalation entry that names no decider', async () => {
    const refused = await put({
      ...base,
      approval: {
        requested_from: [],
        ttl_seconds: 600,
        escalate_after_seconds: 60,
        escalate_to: ['role:approver'],
      },
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { issues: { path: string }[] } };
    expect(body.error.issues.map((issue) => issue.path)).toEqual(['approval.escalate_to.0']);
  });
});
