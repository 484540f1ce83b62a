import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { formToken } from '../../activities/approvals/form-token.js';
import { CONTENT_SECURITY_POLICY } from '../../api/connect/pages/index.js';
import type { CallStack } from '../support/call-stack.js';
import type { TestKey } from '../support/keys.js';
import {
  agentUnderPolicy,
  approvalIdOf,
  linksOf,
  startApprovalStack,
  tokenOf,
  type ApprovalStack,
} from './approval-stack.js';
import { stopsAfterAll } from '../support/stops.js';

let approvals: ApprovalStack;
let stack: CallStack;
/** Policy `page` asks alice, and (a mistake the page must survive) the agent itself. */
let agent: TestKey;
/** Policy `brief`: approvals expire after 3 seconds. */
let brief: TestKey;
let publicOrigin: string;
/** Every link token this file opened, to look for in the request log. */
const tokensSeen = new Set<string>();

const started = stopsAfterAll();

beforeAll(async () => {
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  publicOrigin = new URL(stack.config.api.publicUrl).origin;
  await stack.connect('u_page');
  agent = await agentUnderPolicy(stack, 'page', {
    requested_from: ['alice', 'page-bot'],
    ttl_seconds: 3600,
  });
  brief = await agentUnderPolicy(stack, 'brief', { requested_from: ['alice'], ttl_seconds: 3 });
});

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

async function open(url: string, init: RequestInit = {}): Promise<Page> {
  tokensSeen.add(tokenOf(url));
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Posts the page's form as a browser on the page would, unless told otherwise. */
function post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return open(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: publicOrigin,
      'sec-fetch-site': 'same-origin',
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

function formFieldOf(page: Page): string {
  const field = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
  if (!field) throw new Error(`no form field in ${page.text}`);
  return field;
}

/** A call of `key` held for approval, and its decision links by approver. */
async function held(key: TestKey, title: string) {
  const approvalId = approvalIdOf(
    await stack.run('acme.create_task', { user: 'u_page', input: { title } }, { key }),
  );
  return { approvalId, links: await linksOf(approvals, approvalId) };
}

async function approvalState(approvalId: string) {
  const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
  return { status: view.body.status, decided_by: view.body.decided_by };
}

function expectBrandedPage(page: Page, status: number) {
  expect(page.status).toBe(status);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.text).toMatch(/^<!doctype html>/);
  expect(page.text).not.toContain('<script');
}

describe('the hosted approval page', () => {
  it('shows the whole request, who asks, under which policy and until when; opening it decides nothing', async () => {
    const title = `<script>alert("x")</script> ${randomUUID()}`;
    const { approvalId, links } = await held(agent, title);
    const url = links.alice ?? '';
    const page = await open(url);
    expectBrandedPage(page, 200);
    expect(page.headers.get('referrer-policy')).toBe('strict-origin');
    const view = await stack.request(stack.key, 'GET', `/v1/approvals/${approvalId}`);
    const policy = view.body.policy as { rule: string };
    for (const shown of [
      '<span class="keep">page-bot</span> asks to run <span class="keep">acme.create_task</span>',
      'u_page',
      '<code>page</code> version 1',
      policy.rule.replace(/>/g, '&gt;'),
      'Deciding as</dt>',
      'alice',
      approvalId,
      String(view.body.expires_at).slice(0, 10),
      // The input, as JSON, escaped.
      '&quot;title&quot;: &quot;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;',
      `<form method="post" action="${url}">`,
    ]) {
      expect(page.text).toContain(shown);
    }
    expect(await approvalState(approvalId)).toEqual({ status: 'pending', decided_by: null });
  });

  it('shows a proxied request as it will be sent: method, path, query, headers and body', async () => {
    const body = JSON.stringify({ title: `proxied <b>${randomUUID()}</b>` });
    const answer = await stack.request(agent, 'POST', '/v1/proxy/acme/tasks?source=page', {
      raw: body,
      headers: {
        'service-user': 'u_page',
        'content-type': 'application/json',
        'x-review-note': 'shown to the approver',
      },
    });
    const approvalId = approvalIdOf(answer);
    const links = await linksOf(approvals, approvalId);
    const page = await open(links.alice ?? '');
    expectBrandedPage(page, 200);
    const escaped = body.replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    for (const shown of [
      '<span class="keep">page-bot</span> asks to run <span class="keep">acme.proxy</span>',
      '<strong>POST</strong>',
      '/tasks?source=page',
      'x-review-note',
      'shown to the approver',
      `${String(Buffer.byteLength(body))} bytes`,
      createHash('sha256').update(body).digest('hex'),
      escaped,
    ]) {
      expect(page.text).toContain(shown);
    }
  });

  it('refuses a POST without the page’s form field, or from another site, and decides nothing', async () => {
    const { approvalId, links } = await held(agent, `guarded ${randomUUID()}`);
    const url = links.alice ?? '';
    const csrf = formFieldOf(await open(url));
    const refusals = [
      await post(url, { decision: 'approve' }),
      await post(url, { decision: 'approve', csrf: randomBytes(32).toString('base64url') }),
      // The field of another link's page does not fit this one.
      await post(url, {
        decision: 'approve',
        csrf: formToken(stack.config.encryption, 'x'.repeat(43)),
      }),
      await post(url, { decision: 'approve', csrf }, { origin: 'https://evil.example' }),
      await post(url, { decision: 'approve', csrf }, { 'sec-fetch-site': 'cross-site' }),
      await post(url, { decision: 'approve', csrf }, { 'sec-fetch-site': 'same-site' }),
    ];
    for (const page of refusals) expectBrandedPage(page, 403);
    expect(refusals[0]?.text).toContain('This form could not be verified');
    expect(refusals[3]?.text).toContain('This decision came from another site');
    expect(await approvalState(approvalId)).toEqual({ status: 'pending', decided_by: null });
  });

  it('approves as the link’s approver, through the workflow; a second decision is 409', async () => {
    const { approvalId, links } = await held(agent, `approve me ${randomUUID()}`);
    const url = links.alice ?? '';
    const csrf = formFieldOf(await open(url));

    const decided = await post(url, { decision: 'approve', csrf });
    expectBrandedPage(decided, 200);
    expect(decided.text).toContain('<h1>Approved</h1>');
    expect(decided.text).toContain('<strong class="keep">alice (decision link)</strong>');
    expect(decided.text).toContain('runs, exactly once: right away if the agent is waiting');
    expect(await approvalState(approvalId)).toEqual({
      status: 'approved',
      decided_by: 'alice (decision link)',
    });
    const [link] = await stack.db.sql<{ usedAt: Date | null }[]>`
      select used_at from approval_links where approval_id = ${approvalId} and approver = 'alice'`;
    expect(link?.usedAt).toEqual(expect.any(Date));

    const again = await post(url, { decision: 'reject', csrf });
    expectBrandedPage(again, 409);
    expect(again.text).toContain('This approval was already decided');
    expect(again.text).toMatch(/approved by\s+<span class="keep">alice \(decision link\)<\/span>/);
    expectBrandedPage(await open(url), 409);
    expect(await approvalState(approvalId)).toEqual({
      status: 'approved',
      decided_by: 'alice (decision link)',
    });
  });

  it('refuses a link that names the held call’s own agent (four eyes); the approval stays pending', async () => {
    const { approvalId, links } = await held(agent, `own agent ${randomUUID()}`);
    const url = links['page-bot'] ?? '';
    const page = await open(url);
    expectBrandedPage(page, 403);
    expect(page.text).toContain('You cannot decide this approval through this link.');
    expect(page.text).toContain('an agent can never decide its own approval');
    expect(page.text).not.toContain('<form');

    // Even a well-formed POST (the field is made here as the page would have) is refused.
    const refused = await post(url, {
      decision: 'approve',
      csrf: formToken(stack.config.encryption, tokenOf(url)),
    });
    expectBrandedPage(refused, 403);
    expect(refused.text).toContain('You cannot decide this approval');
    expect(await approvalState(approvalId)).toEqual({ status: 'pending', decided_by: null });
  });

  it('shows an expired approval as expired, and does not decide it', async () => {
    const { approvalId, links } = await held(brief, `too late ${randomUUID()}`);
    const url = links.alice ?? '';
    const csrf = formToken(stack.config.encryption, tokenOf(url));
    // The approval lives 3 s; wait it out with a budget a loaded machine keeps.
    const deadline = Date.now() + 60_000;
    let page = await open(url);
    while (page.status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      page = await open(url);
    }
    expectBrandedPage(page, 410);
    expect(page.text).toContain('This approval has expired');
    const late = await post(url, { decision: 'approve', csrf });
    expectBrandedPage(late, 410);
    expect(late.text).toContain('This approval has expired');
    expect((await approvalState(approvalId)).status).toBe('expired');
  });

  it('answers an unknown or forged link with a branded 404 page', async () => {
    const { links } = await held(agent, `forged ${randomUUID()}`);
    const real = links.alice ?? '';
    const base = real.slice(0, real.lastIndexOf('/') + 1);
    const forged = `${base}${randomBytes(32).toString('base64url')}`;
    // One character changed; the replacement must differ from the real last
    // character, which is 'A' for one link in sixteen.
    const oneOff = `${real.slice(0, -1)}${real.endsWith('A') ? 'E' : 'A'}`;
    for (const url of [forged, `${base}not-a-token`, oneOff]) {
      const page = await open(url);
      expectBrandedPage(page, 404);
      expect(page.text).toContain('This link is not valid');
      expectBrandedPage(
        await post(url, {
          decision: 'approve',
          csrf: formToken(stack.config.encryption, tokenOf(url)),
        }),
        404,
      );
    }
  });

  it('never writes a link token into the request log', () => {
    const logs = stack.api.logs.join('\n');
    expect(logs).toContain('/approvals/review/[token]');
    expect(tokensSeen.size).toBeGreaterThan(5);
    for (const token of tokensSeen) expect(logs).not.toContain(token);
  });
});
