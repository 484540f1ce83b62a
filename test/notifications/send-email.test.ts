import { beforeAll, describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { formToken } from '../../activities/approvals/form-token.js';
import { hashLinkToken } from '../../activities/approvals/link-token.js';
import {
  EMAIL_FAILURES,
  sendApprovalEmail,
  type ApprovalEmailRequest,
  type SentApprovalEmail,
  type SmtpRelay,
  type SmtpTimeouts,
} from '../../activities/notifications/send-email.js';
import { agentUnderPolicy, approvalIdOf } from '../approvals/approval-stack.js';
import { answeredWithin } from '../support/answered-within.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import type { TestKey } from '../support/keys.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { REFUSED_PORT } from '../support/refused-port.js';
import { startTestSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { stopsAfterAll } from '../support/stops.js';
import { testLogger } from '../support/test-log.js';

/**
 * Sending approval e-mail for real (README, "Approval e-mail"): a real SMTP server on loopback as
 * the relay, the message it received parsed as a mail client would, its Approve link followed in
 * Chromium to the review page, where one press decides. Then what the relay can answer: down,
 * 4xx, 5xx, a wrong password, a greeting that never comes.
 */

const ALICE = 'person:alice@example.com';
const RELAY_PASSWORD = `relay-password-${randomUUID()}`;

let stack: CallStack;
let smtp: TestSmtpServer;
let browser: Browser;
/** Agent `mail-bot`: its writes ask alice. */
let agent: TestKey;
let connection: SeededConnection;

const started = stopsAfterAll();

beforeAll(async () => {
  const executablePath = await ensureChromium();
  stack = started.add(await startCallStack());
  smtp = started.add(
    await startTestSmtpServer({ login: { username: 'gatehouse', password: RELAY_PASSWORD } }),
  );
  connection = await stack.connect('u_mail');
  agent = await agentUnderPolicy(stack, 'mail', { requested_from: [ALICE], ttl_seconds: 3600 });
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
}, 600_000);

function relay(overrides: Partial<SmtpRelay> = {}): SmtpRelay {
  return {
    host: smtp.host,
    port: smtp.port,
    security: 'none',
    username: 'gatehouse',
    password: RELAY_PASSWORD,
    senderAddress: 'approvals@gatehouse.test',
    senderName: 'Gatehouse approvals',
    keyAgentId: null,
    ...overrides,
  };
}

const deps = () => ({ sql: stack.db.sql, config: stack.config, logger: testLogger() });

/** Holds a call of mail-bot's: its approval asks alice. */
async function held(
  title = `mail ${randomUUID()}`,
): Promise<{ approvalId: string; title: string }> {
  const answer = await stack.run(
    'acme.create_task',
    { user: 'u_mail', input: { title } },
    { key: agent },
  );
  return { approvalId: approvalIdOf(answer), title };
}

function toAlice(approvalId: string): ApprovalEmailRequest {
  return {
    environmentId: stack.environmentId,
    approvalId,
    addressee: ALICE,
    to: 'alice@example.com',
    keyAgentId: null,
  };
}

function send(
  approvalId: string,
  overrides: Partial<SmtpRelay> = {},
  timeouts?: SmtpTimeouts,
): Promise<SentApprovalEmail> {
  return sendApprovalEmail(deps(), relay(overrides), toAlice(approvalId), timeouts);
}

/** The failure a send ended with, which must be an ApplicationFailure. */
async function failureOf(sending: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await sending.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ApplicationFailure)) {
    throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  }
  return error;
}

const linkOf = (html: string, text: string): string => {
  const match = new RegExp(`<a\\s+href="([^"]+)"[^>]*>\\s*${text}\\s*</a`).exec(html);
  if (!match?.[1]) throw new Error(`no ${text} link`);
  return match[1].replace(/&amp;/g, '&');
};

/** What a person reads: the text without the markup's line breaks around it. */
const textOf = async (locator: Locator): Promise<string> =>
  ((await locator.textContent()) ?? '').trim();
const textsOf = async (locator: Locator): Promise<string[]> =>
  (await locator.allTextContents()).map((text) => text.trim());

async function approvalState(id: string) {
  const view = await stack.request(stack.approver, 'GET', `/v1/approvals/${id}`);
  return { status: view.body.status, decided_by: view.body.decided_by };
}

describe('approval e-mail through a real SMTP relay', () => {
  it('reaches the person, its Approve link opens the review page in Chromium, and one press approves', async () => {
    const { approvalId, title } = await held();
    const before = smtp.messages.length;
    const sent = await send(approvalId);
    expect(sent).toMatchObject({ outcome: 'sent', response: expect.stringContaining('250') });
    const received = await smtp.message(before + 1);

    // The envelope and headers, as a mail client and the relay's logs see them.
    expect(received.user).toBe('gatehouse');
    expect(received.envelope).toEqual({
      from: 'approvals@gatehouse.test',
      to: ['alice@example.com'],
    });
    const { parsed } = received;
    expect(parsed.subject).toBe('Approve acme.create_task for u_mail? (mail-bot)');
    expect(parsed.from?.value).toEqual([
      { address: 'approvals@gatehouse.test', name: 'Gatehouse approvals' },
    ]);
    expect(parsed.headers.get('auto-submitted')).toBe('auto-generated');
    expect(parsed.headers.get('x-gatehouse-approval')).toBe(approvalId);
    expect(parsed.messageId).toBe(sent.outcome === 'sent' ? sent.messageId : null);
    expect(parsed.messageId).toMatch(
      new RegExp(`^<approval\\.${approvalId}\\.[0-9a-f]{16}@gatehouse\\.test>$`),
    );
    expect(parsed.text).toContain(`"title": "${title}"`);
    const html = typeof parsed.html === 'string' ? parsed.html : '';
    expect(html).toContain(title);

    // Nothing secret went out: not the relay's password, not a key, not the user's tokens.
    const raw = received.raw.toString('latin1');
    for (const secret of [
      RELAY_PASSWORD,
      stack.key.key,
      stack.approver.key,
      agent.key,
      connection.accessToken,
      connection.refreshToken,
      stack.config.encryption.current.key.toString('base64'),
    ]) {
      expect(raw).not.toContain(secret);
    }

    // The link it carries was made for alice, on the e-mail channel, and is stored hashed.
    const approve = linkOf(html, 'Approve');
    const reject = linkOf(html, 'Reject');
    expect(approve).toMatch(/\/approvals\/review\/[A-Za-z0-9_-]{43}\?choice=approve$/);
    expect(reject).toBe(approve.replace('choice=approve', 'choice=reject'));
    expect(parsed.text).toContain(`Approve: ${approve}`);
    const token = new URL(approve).pathname.split('/').at(-1) ?? '';
    const rows = await stack.db.sql<{ approver: string; channel: string; keyAgentId: null }[]>`
      select approver, channel, key_agent_id from approval_links
      where token_hash = ${hashLinkToken(token)}`;
    expect(rows).toEqual([{ approver: ALICE, channel: 'email', keyAgentId: null }]);

    // A mail scanner opens every link it finds: that decides nothing.
    for (const url of [approve, reject]) {
      expect((await fetch(url)).status).toBe(200);
    }
    expect(await approvalState(approvalId)).toEqual({ status: 'pending', decided_by: null });

    // Alice reads it, with no script running, and presses Approve: the page has Approve ready,
    // and one press of its button decides.
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.setContent(html);
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe(
        'mail-bot asks to run acme.create_task for u_mail',
      );
      await expect(textsOf(page.getByRole('rowheader'))).resolves.toContain('Valid until');
      await page.getByRole('link', { name: 'Approve' }).click();
      await page.waitForURL(approve);
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe(
        'mail-bot asks to run acme.create_task',
      );
      await expect(page.getByRole('status').textContent()).resolves.toContain('You chose Approve');
      const buttons = page.locator('.actions button');
      await expect(textsOf(buttons)).resolves.toEqual(['Approve', 'Reject']);
      // The chosen button has the focus: one press (or Enter) confirms it.
      await expect(textOf(page.locator('button:focus'))).resolves.toBe('Approve');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe('Approved');
    } finally {
      await context.close();
    }
    expect(await approvalState(approvalId)).toEqual({
      status: 'approved',
      decided_by: `${ALICE} (decision link)`,
    });

    // The call runs once, when sent again.
    const ran = await stack.run(
      'acme.create_task',
      { user: 'u_mail', input: { title } },
      { key: agent },
    );
    expect(ran.status).toBe(200);
  });

  it('opens with Reject ready from the Reject link', async () => {
    const { approvalId } = await held();
    const before = smtp.messages.length;
    await send(approvalId);
    const { parsed } = await smtp.message(before + 1);
    const reject = linkOf(typeof parsed.html === 'string' ? parsed.html : '', 'Reject');
    const page = await browser.newPage();
    try {
      await page.goto(reject);
      await expect(page.getByRole('status').textContent()).resolves.toContain('You chose Reject');
      await expect(textsOf(page.locator('.actions button'))).resolves.toEqual([
        'Reject',
        'Approve',
      ]);
      await page.getByRole('button', { name: 'Reject' }).click();
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe('Rejected');
    } finally {
      await page.close();
    }
    expect(await approvalState(approvalId)).toMatchObject({ status: 'rejected' });
  });

  it('sends the same message again after a crash: same Message-ID, same link', async () => {
    const { approvalId } = await held();
    const before = smtp.messages.length;
    const first = await send(approvalId);
    const second = await send(approvalId);
    const [one, two] = [await smtp.message(before + 1), await smtp.message(before + 2)];
    expect(first).toMatchObject({ outcome: 'sent' });
    expect(second).toEqual({ ...first, response: expect.any(String) });
    expect(two.parsed.messageId).toBe(one.parsed.messageId);
    expect(two.parsed.text).toBe(one.parsed.text);
    const links = await stack.db.sql`
      select 1 from approval_links where approval_id = ${approvalId} and channel = 'email'`;
    expect(links).toHaveLength(1);
  });

  it('sends nothing once the approval is decided', async () => {
    const { approvalId } = await held();
    const before = smtp.messages.length;
    await send(approvalId);
    const { parsed } = await smtp.message(before + 1);
    // Alice rejects through her link (the page's own form, posted as a browser would).
    const reject = linkOf(typeof parsed.html === 'string' ? parsed.html : '', 'Reject');
    const token = new URL(reject).pathname.split('/').at(-1) ?? '';
    const posted = await fetch(reject.replace(/\?.*$/, ''), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: new URL(stack.config.api.publicUrl).origin,
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({
        decision: 'reject',
        csrf: formToken(stack.config.encryption, token),
      }).toString(),
    });
    expect(posted.status).toBe(200);
    // A send retried after that (a relay that was down until now) sends nothing.
    await expect(send(approvalId)).resolves.toEqual({ outcome: 'not_pending', status: 'rejected' });
    expect(smtp.messages).toHaveLength(before + 1);
  });

  it('records a relay the held agent set: its link shows the request without buttons', async () => {
    const { approvalId } = await held();
    const before = smtp.messages.length;
    await send(approvalId, { keyAgentId: 'mail-bot' });
    const { parsed } = await smtp.message(before + 1);
    const page = await fetch(linkOf(typeof parsed.html === 'string' ? parsed.html : '', 'Approve'));
    expect(page.status).toBe(403);
    const text = await page.text();
    expect(text).toContain('SMTP relay that agent');
    expect(text).not.toContain('value="approve"');
  });
});

describe('what the relay answers', () => {
  let approvalId: string;

  beforeAll(async () => {
    ({ approvalId } = await held());
  });

  it('down: a retryable failure; up again: sent', async () => {
    await smtp.down();
    try {
      const failure = await failureOf(send(approvalId));
      expect(failure.type).toBe(EMAIL_FAILURES.unreachable.type);
      expect(failure.nonRetryable).toBe(false);
      expect(failure.message).toContain(`127.0.0.1:${String(smtp.port)}`);
    } finally {
      await smtp.up();
    }
    const before = smtp.messages.length;
    await expect(send(approvalId)).resolves.toMatchObject({ outcome: 'sent' });
    await smtp.message(before + 1);
  });

  it('nobody at the port: retryable', async () => {
    const failure = await failureOf(send(approvalId, { port: REFUSED_PORT }));
    expect(failure).toMatchObject({ type: 'EmailRelayUnreachable', nonRetryable: false });
  });

  it.each([
    { step: 'greeting', code: 421, type: 'EmailDeferred', nonRetryable: false },
    { step: 'rcpt', code: 450, type: 'EmailDeferred', nonRetryable: false },
    { step: 'data', code: 451, type: 'EmailDeferred', nonRetryable: false },
    { step: 'rcpt', code: 550, type: 'EmailRecipientRejected', nonRetryable: true },
    { step: 'data', code: 554, type: 'EmailRejected', nonRetryable: true },
  ] as const)('$code at $step: $type, nonRetryable $nonRetryable', async (refusal) => {
    const before = smtp.messages.length;
    smtp.refuse({ step: refusal.step, code: refusal.code });
    try {
      const failure = await failureOf(send(approvalId));
      expect(failure.type).toBe(refusal.type);
      expect(failure.nonRetryable).toBe(refusal.nonRetryable);
      expect(failure.message).toContain(`(${String(refusal.code)})`);
      expect(failure.details).toEqual([expect.objectContaining({ responseCode: refusal.code })]);
    } finally {
      smtp.accept();
    }
    expect(smtp.messages).toHaveLength(before);
  });

  it('a wrong password: not retried, and the password is not in the failure', async () => {
    const failure = await failureOf(send(approvalId, { password: 'not-the-password' }));
    expect(failure).toMatchObject({ type: 'EmailRelayMisconfigured', nonRetryable: true });
    expect(failure.message).toContain('535');
    expect(JSON.stringify([failure.message, failure.details])).not.toContain('not-the-password');
  });

  it('a relay that never greets: a retryable failure within the greeting timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      // Connecting and silence are allowed ten minutes: only the greeting's bound can end this
      // within the budget.
      const tenMinutes = 600_000;
      const failure = await failureOf(
        answeredWithin(
          'a send to a relay that never greets',
          60_000,
          send(approvalId, { port }, { connection: tenMinutes, greeting: 300, socket: tenMinutes }),
        ),
      );
      expect(failure).toMatchObject({ type: 'EmailRelayUnreachable', nonRetryable: false });
      expect(failure.details).toEqual([expect.objectContaining({ code: 'ETIMEDOUT' })]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an address that is not one plain address: refused before any connection, not retried', async () => {
    const before = smtp.messages.length;
    const failure = await failureOf(
      sendApprovalEmail(deps(), relay(), {
        ...toAlice(approvalId),
        to: 'alice@example.com, mallory@example.com',
      }),
    );
    expect(failure).toMatchObject({ type: 'EmailAddressInvalid', nonRetryable: true });
    expect(smtp.messages).toHaveLength(before);
  });
});
