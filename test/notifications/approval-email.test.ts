import { describe, expect, it } from '@jest/globals';
import {
  SHOWN_REQUEST_CHARACTERS,
  approvalEmail,
  approvalMessageId,
  type ApprovalEmailInput,
  type EmailedApproval,
} from '../../activities/notifications/approval-email.js';

/**
 * The approval e-mail as data (README, "Approval e-mail"): its subject, its two parts, its
 * headers, and what a hostile value in the held call can and cannot do to it.
 */

const TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE';
const LINK = `https://gatehouse.example.com/approvals/review/${TOKEN}`;

function approval(overrides: Partial<EmailedApproval> = {}): EmailedApproval {
  return {
    id: '0190f5b2-7c3e-7a4b-9d2e-3f4a5b6c7d8e',
    action: 'acme.delete_task',
    scope: 'destructive',
    agentId: 'cleanup-bot',
    userExternalId: 'u_123',
    request: {
      action: 'acme.delete_task',
      user: 'u_123',
      via: 'api',
      input: { id: 't_42', reason: 'duplicate' },
    },
    policyId: 'deletes',
    policyVersion: 3,
    policyRule: 'defaults.destructive',
    createdAt: new Date('2026-03-02T09:15:30.000Z'),
    expiresAt: new Date('2026-03-03T09:15:30.000Z'),
    quorum: 1,
    ...overrides,
  };
}

function input(overrides: Partial<ApprovalEmailInput> = {}): ApprovalEmailInput {
  return {
    approval: approval(),
    environment: 'production',
    approver: 'person:alice@example.com',
    to: 'alice@example.com',
    from: { address: 'approvals@gatehouse.example.com', name: 'Gatehouse' },
    linkUrl: LINK,
    ...overrides,
  };
}

/** The text between two markers, or '' (to read one part of the HTML). */
function between(text: string, start: string, end: string): string {
  const from = text.indexOf(start);
  if (from < 0) return '';
  const to = text.indexOf(end, from + start.length);
  return text.slice(from + start.length, to < 0 ? undefined : to);
}

describe('the approval e-mail', () => {
  it('asks in its subject, and says who sends it, to whom and about which approval', () => {
    const message = approvalEmail(input());
    expect(message.subject).toBe('Approve acme.delete_task for u_123? (cleanup-bot)');
    expect(message.to).toBe('alice@example.com');
    expect(message.from).toEqual({ address: 'approvals@gatehouse.example.com', name: 'Gatehouse' });
    expect(message.headers).toEqual({
      'Auto-Submitted': 'auto-generated',
      'X-Auto-Response-Suppress': 'All',
      'X-Gatehouse-Approval': '0190f5b2-7c3e-7a4b-9d2e-3f4a5b6c7d8e',
    });
    expect(message.messageId).toMatch(
      /^<approval\.0190f5b2-7c3e-7a4b-9d2e-3f4a5b6c7d8e\.[0-9a-f]{16}@gatehouse\.example\.com>$/,
    );
  });

  it('has the same Message-ID at every send to one addressee and address, and another for anyone else', () => {
    const once = approvalEmail(input()).messageId;
    expect(approvalEmail(input()).messageId).toBe(once);
    // A later send that found the approval a little older is still the same message.
    expect(approvalEmail(input({ linkUrl: `${LINK}x` })).messageId).toBe(once);
    expect(
      approvalMessageId(
        approval().id,
        { approver: 'PERSON:Alice@Example.com', to: 'ALICE@example.com' },
        'approvals@gatehouse.example.com',
      ),
    ).toBe(once);
    const others = [
      approvalEmail(input({ approver: 'person:bob@example.com', to: 'bob@example.com' })),
      // One group's link to two mailboxes: two messages.
      approvalEmail(input({ approver: 'group:finance', to: 'finance@example.com' })),
      approvalEmail(input({ approver: 'group:finance', to: 'finance-oncall@example.com' })),
      approvalEmail(input({ approval: approval({ id: '0190f5b2-0000-7000-8000-000000000000' }) })),
    ].map((message) => message.messageId);
    expect(new Set([once, ...others]).size).toBe(5);
  });

  it('makes its Message-ID on a fixed domain when the sender’s is not a plain one', () => {
    const message = approvalEmail(
      input({ from: { address: 'approvals@[192.0.2.1]', name: null } }),
    );
    expect(message.messageId).toMatch(/@gatehouse\.invalid>$/);
  });

  it('is plain accessible HTML: a language, a heading, a facts table with header cells, two buttons with text, no script, image or style sheet', () => {
    const { html } = approvalEmail(input());
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toMatch(/<html lang="en"/);
    expect(html).toContain('<meta charset="utf-8" />');
    expect(between(html, '<title>', '</title>')).toBe(
      'Approve acme.delete_task for u_123? (cleanup-bot)',
    );
    expect(html.match(/<h1\b/g)).toHaveLength(1);
    expect(/<h1[^>]*>\s*([^<]*?)\s*<\/h1>/.exec(html)?.[1]).toBe(
      'cleanup-bot asks to run acme.delete_task for u_123',
    );
    const facts = [...html.matchAll(/<th\s+scope="row"[^>]*>\s*([^<]*?)\s*<\/th>/g)].map(
      (match) => match[1],
    );
    expect(facts).toEqual([
      'Agent',
      'For user',
      'Action',
      'Environment',
      'Policy',
      'Asked',
      'Valid until',
      'Deciding as',
      'Approval',
    ]);
    expect(html).toContain('2026-03-03 09:15:30 UTC');
    const links = [...html.matchAll(/<a\s+href="([^"]*)"[^>]*>\s*([^<]*?)\s*<\/a\s*>/g)].map(
      (match) => ({ href: match[1], text: match[2] }),
    );
    expect(links).toEqual([
      { href: `${LINK}?choice=approve`, text: 'Approve' },
      { href: `${LINK}?choice=reject`, text: 'Reject' },
    ]);
    for (const absent of [/<script/i, /<img/i, /<style/i, /<link/i, /\son[a-z]+=/i, /<form/i]) {
      expect(html).not.toMatch(absent);
    }
    // The input that will run, as JSON.
    expect(html).toContain('&quot;reason&quot;: &quot;duplicate&quot;');
  });

  it('has a text part with the same facts and links', () => {
    const { text } = approvalEmail(input());
    const lines = text.split('\n');
    expect(lines[0]).toBe('cleanup-bot asks to run acme.delete_task for u_123');
    for (const fact of [
      'Agent:        cleanup-bot',
      'For user:     u_123',
      'Action:       acme.delete_task (destructive)',
      'Environment:  production',
      'Policy:       deletes, version 3 (defaults.destructive)',
      'Asked:        2026-03-02 09:15:30 UTC',
      'Valid until:  2026-03-03 09:15:30 UTC',
      'Deciding as:  person:alice@example.com',
      'Approval:     0190f5b2-7c3e-7a4b-9d2e-3f4a5b6c7d8e',
      `Approve: ${LINK}?choice=approve`,
      `Reject:  ${LINK}?choice=reject`,
      '      "reason": "duplicate"',
    ]) {
      expect(lines).toContain(fact);
    }
    expect(text).toContain('nothing is decided until you press');
  });

  it('says how many people must approve when more than one must', () => {
    const message = approvalEmail(input({ approval: approval({ quorum: 2 }) }));
    expect(message.text.split('\n')).toContain('Approvals:    2 different people must approve');
    expect(message.html).toContain('2 different people must approve');
  });

  it('shows a proxied request as it will be sent', () => {
    const proxied = approval({
      action: 'acme.proxy',
      scope: 'write',
      request: {
        action: 'acme.proxy',
        user: 'u_123',
        via: 'api',
        method: 'POST',
        path: 'tasks',
        query: 'notify=1',
        headers: {
          'content-type': 'application/json',
          'x-bytes': { encoding: 'base64', content: '/w==' },
        },
        body: {
          bytes: 16,
          sha256: 'ab'.repeat(32),
          encoding: 'utf8',
          content: '{"title":"Ship"}',
          truncated: false,
        },
      },
    });
    const { text, html } = approvalEmail(input({ approval: proxied }));
    expect(text).toContain('Request that will be sent:');
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        '    POST /tasks?notify=1',
        '    content-type: application/json',
        '    x-bytes: /w== (base64)',
        '    {"title":"Ship"}',
      ]),
    );
    expect(html).toContain('POST /tasks?notify=1');
  });

  it('escapes every value of a hostile call: no markup, no forged line, no reordered text', () => {
    const hostile = approval({
      agentId: '"><img src=x onerror=alert(1)>',
      userExternalId: 'u_1\nApprove: https://evil.example/steal',
      policyRule: '<a href="https://evil.example/">click</a>',
      request: {
        action: 'acme.create_task',
        user: 'u_1',
        via: 'api',
        input: {
          title: '<script>alert(document.cookie)</script>',
          notes: '</pre><a href="https://evil.example/">Approve</a>',
          flipped: 'safe\u202Egnp.exe',
        },
      },
    });
    const message = approvalEmail(input({ approval: hostile, environment: 'prod</title>' }));
    // HTML: the values are text, every one of them.
    expect(message.html).not.toMatch(/<script/i);
    expect(message.html).not.toMatch(/<img/i);
    expect(message.html).not.toContain('</pre><a');
    expect(message.html).not.toContain('prod</title>');
    expect(message.html).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(message.html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect([...message.html.matchAll(/<a\s/g)]).toHaveLength(2);
    expect(message.html).not.toContain('https://evil.example/"');
    // Text: a newline in a value starts no line of its own, and no line but ours says Approve.
    const lines = message.text.split('\n');
    expect(lines.filter((line) => line.startsWith('Approve:'))).toEqual([
      `Approve: ${LINK}?choice=approve`,
    ]);
    expect(lines).toContain('For user:     u_1\\u000aApprove: https://evil.example/steal');
    // A right-to-left override is shown, not obeyed.
    expect(message.text).not.toContain('\u202E');
    expect(message.html).not.toContain('\u202E');
    expect(message.text).toContain('safe\\u202egnp.exe');
    // The subject is one line.
    expect(message.subject).not.toMatch(/[\r\n]/);
  });

  it('cuts a very long input, saying so, and every other value too', () => {
    const long = 'x'.repeat(100_000);
    const message = approvalEmail(
      input({
        approval: approval({
          userExternalId: `u_${'y'.repeat(5_000)}`,
          request: { action: 'acme.create_task', user: 'u', via: 'api', input: { notes: long } },
        }),
      }),
    );
    const note = `Only the first 2,000 of 100,017 characters are shown here; the review page shows all of it.`;
    expect(message.text).toContain(note);
    expect(message.html).toContain(note);
    const shown = between(message.html, '<pre', '</pre>');
    expect(shown.length).toBeLessThan(SHOWN_REQUEST_CHARACTERS + 500);
    expect(message.subject.length).toBeLessThan(500);
    expect(message.html.length + message.text.length).toBeLessThan(25_000);
  });

  it('cuts between characters, never inside one', () => {
    const emoji = '😀'.repeat(3_000);
    const message = approvalEmail(
      input({
        approval: approval({ request: { action: 'a', user: 'u', via: 'api', input: emoji } }),
      }),
    );
    expect(message.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(message.text).toContain('😀…');
  });

  it('holds nothing but what it was given: the link’s token only in its two links', () => {
    const message = approvalEmail(input());
    for (const part of [message.html, message.text]) {
      expect(part.split(TOKEN)).toHaveLength(3);
    }
    expect(message.subject).not.toContain(TOKEN);
    expect(message.messageId).not.toContain(TOKEN);
    expect(JSON.stringify(message.headers)).not.toContain(TOKEN);
  });
});
