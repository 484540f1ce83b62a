import { beforeAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { ensureEnvironment } from '../../activities/db/environments.js';
import {
  listNotificationChannels,
  openNotificationChannels,
  setNotificationChannel,
} from '../../activities/db/notification-channels.js';
import {
  listNotificationRoutes,
  replaceNotificationRoutes,
} from '../../activities/db/notification-routes.js';
import {
  approvalEmail,
  type EmailedApproval,
} from '../../activities/notifications/approval-email.js';
import { sendEmail } from '../../activities/notifications/send-email.js';
import { mailLine } from '../../infra/cli/dev.js';
import { bindServer } from '../../infra/dev/bind-port.js';
import {
  DEV_APPROVERS_MAILBOX,
  DEV_MAIL_SENDER,
  seedDevMailChannel,
} from '../../infra/dev/dev-mail-channel.js';
import {
  createMailCatcher,
  type CaughtMessage,
  type MailCatcher,
} from '../../infra/dev/mail-catcher.js';
import type { Config } from '../../infra/config.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';
import { testLogger } from '../support/test-log.js';

/**
 * The mail catcher of `gatehouse dev` (infra/dev/README.md, "The mail catcher"), without the rest
 * of the stack: the development environment's e-mail channel as the stack seeds it, an approval
 * e-mail sent through that channel as stored, and the catcher's pages showing it in Chromium.
 */

let db: TestDatabase;
let config: Config;
let catcher: MailCatcher;
let smtpPort: number;
let webUrl: string;
let browser: Browser;

const started = stopsAfterAll();

beforeAll(async () => {
  const executablePath = await ensureChromium();
  db = started.add(await createTestDatabase());
  config = testConfig(db.url);
  catcher = started.add(createMailCatcher({ logger: testLogger(), kept: 3 }));
  smtpPort = await bindServer(catcher.smtp, 0);
  webUrl = `http://127.0.0.1:${String(await bindServer(catcher.web, 0))}`;
  browser = started.add(await chromium.launch({ executablePath, args: CHROMIUM_ARGS }));
}, 120_000);

const LINK = 'http://127.0.0.1:3000/approvals/review/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE';

function approval(overrides: Partial<EmailedApproval> = {}): EmailedApproval {
  return {
    id: '0190f5b2-7c3e-7a4b-9d2e-3f4a5b6c7d8e',
    action: 'acme.create_task',
    scope: 'write',
    agentId: 'demo-agent',
    userExternalId: 'u_123',
    request: { action: 'acme.create_task', user: 'u_123', via: 'api', input: { title: 'Ship' } },
    policyId: 'default',
    policyVersion: 1,
    policyRule: 'defaults.write',
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 3_600_000),
    quorum: 1,
    ...overrides,
  };
}

/** The next message the catcher catches. */
function nextCaught(): Promise<CaughtMessage> {
  return new Promise((resolve) => {
    const stop = catcher.onMessage((message) => {
      stop();
      resolve(message);
    });
  });
}

const textOf = async (locator: Locator): Promise<string> =>
  ((await locator.textContent()) ?? '').trim();

describe('the development environment’s e-mail channel', () => {
  it('points at the catcher when there is none, with a route for everyone asked to their own address and the approvers’ mailbox; follows the catcher’s port; leaves an operator’s relay alone', async () => {
    const environment = await ensureEnvironment(db.sql, 'development');
    expect(await seedDevMailChannel(db.sql, config.encryption, environment.id, 1025)).toEqual({
      to: 'catcher',
    });
    expect(await listNotificationChannels(db.sql, environment.id)).toEqual([
      expect.objectContaining({
        kind: 'email',
        host: '127.0.0.1',
        port: 1025,
        security: 'none',
        username: null,
        passwordSet: false,
        senderAddress: DEV_MAIL_SENDER.address,
        updatedBy: 'gatehouse dev',
        keyAgentId: null,
      }),
    ]);
    expect(await listNotificationRoutes(db.sql, environment.id)).toEqual([
      expect.objectContaining({
        audience: '*',
        kind: 'email',
        target: { type: 'each_person' },
        updatedBy: 'gatehouse dev',
      }),
      expect.objectContaining({
        audience: '*',
        kind: 'email',
        target: { type: 'address', address: DEV_APPROVERS_MAILBOX },
        updatedBy: 'gatehouse dev',
      }),
    ]);

    // A later start on another port: the channel follows it.
    await seedDevMailChannel(db.sql, config.encryption, environment.id, 2025);
    expect(await listNotificationChannels(db.sql, environment.id)).toEqual([
      expect.objectContaining({ kind: 'email', port: 2025 }),
    ]);

    // An operator's relay is theirs.
    await setNotificationChannel(
      db.sql,
      config.encryption,
      environment.id,
      {
        kind: 'email',
        host: 'smtp.example.com',
        port: 587,
        security: 'starttls',
        username: 'ops',
        password: 'secret',
        senderAddress: 'ops@example.com',
        senderName: null,
      },
      { label: 'admin', keyAgentId: 'admin' },
    );
    expect(await seedDevMailChannel(db.sql, config.encryption, environment.id, 3025)).toEqual({
      to: 'own relay',
      host: 'smtp.example.com',
      port: 587,
    });
    expect(await listNotificationChannels(db.sql, environment.id)).toEqual([
      expect.objectContaining({ host: 'smtp.example.com', port: 587, updatedBy: 'admin' }),
    ]);
  });

  it('keeps an e-mail route someone set before the first start: the channel is seeded, the route is theirs', async () => {
    const environment = await ensureEnvironment(db.sql, 'routed');
    await replaceNotificationRoutes(
      db.sql,
      config.encryption,
      environment.id,
      'group:finance',
      'email',
      [{ type: 'address', address: 'finance@example.com' }],
      { label: 'admin', keyAgentId: 'admin' },
    );
    expect(await seedDevMailChannel(db.sql, config.encryption, environment.id, 1025)).toEqual({
      to: 'catcher',
    });
    expect(await listNotificationChannels(db.sql, environment.id)).toEqual([
      expect.objectContaining({ kind: 'email', port: 1025, updatedBy: 'gatehouse dev' }),
    ]);
    expect(await listNotificationRoutes(db.sql, environment.id)).toEqual([
      expect.objectContaining({
        audience: 'group:finance',
        kind: 'email',
        target: { type: 'address', address: 'finance@example.com' },
        updatedBy: 'admin',
      }),
    ]);
  });

  it('names in the banner where the e-mail goes', () => {
    expect(
      mailLine(
        { url: 'http://127.0.0.1:1080', smtp: '127.0.0.1:1025', channel: { to: 'catcher' } },
        'development',
      ),
    ).toBe(
      '  Mail          http://127.0.0.1:1080   (the mail catcher: "development"\'s approval e-mails, sent to SMTP 127.0.0.1:1025)',
    );
    expect(
      mailLine(
        {
          url: 'http://127.0.0.1:1080',
          smtp: '127.0.0.1:1025',
          channel: { to: 'own relay', host: 'smtp.example.com', port: 587 },
        },
        'development',
      ),
    ).toContain('"development" sends through its own relay smtp.example.com:587');
  });
});

describe('the mail catcher', () => {
  it('catches an approval e-mail sent through the seeded channel and shows it: the list, the message, its HTML part without scripts, its text and source', async () => {
    const environment = await ensureEnvironment(db.sql, 'catching');
    await seedDevMailChannel(db.sql, config.encryption, environment.id, smtpPort);
    const { email: relay } = await openNotificationChannels(
      db.sql,
      config.encryption,
      environment.id,
    );
    if (!relay) throw new Error('no e-mail channel');
    const message = approvalEmail({
      approval: approval({ userExternalId: 'u_<script>alert(1)</script>' }),
      environment: 'development',
      approver: 'person:alice@example.com',
      to: 'alice@example.com',
      from: { address: relay.senderAddress, name: relay.senderName },
      linkUrl: LINK,
    });
    const caught = nextCaught();
    await sendEmail(relay, message);
    const received = await caught;
    expect(received).toMatchObject({
      id: 1,
      envelope: { from: DEV_MAIL_SENDER.address, to: ['alice@example.com'] },
      subject: message.subject,
      messageId: message.messageId,
    });

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const list = await page.goto(webUrl);
      expect(list?.headers()['content-security-policy']).toContain("default-src 'none'");
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe(
        'Mail caught by gatehouse dev',
      );
      // The subject is text, whatever it holds.
      const subject = page.getByRole('link', { name: message.subject });
      await expect(subject.count()).resolves.toBe(1);
      await subject.click();
      await page.waitForURL(`${webUrl}/messages/1`);
      await expect(textOf(page.getByRole('heading', { level: 1 }))).resolves.toBe(message.subject);
      await expect(textOf(page.locator('pre').first())).resolves.toContain(
        `Approve: ${LINK}?choice=approve`,
      );
      // The HTML part, framed: its buttons link to the review page, and take the whole tab.
      const part = page.frameLocator('iframe[title="The HTML part"]');
      await expect(part.getByRole('link', { name: 'Approve' }).getAttribute('href')).resolves.toBe(
        `${LINK}?choice=approve`,
      );
      await expect(part.locator('base').getAttribute('target')).resolves.toBe('_top');
      // Served as a sandbox without scripts, even opened alone.
      const alone = await fetch(`${webUrl}/messages/1/html`);
      expect(alone.headers.get('content-security-policy')).toMatch(
        /^sandbox [^;]*; default-src 'none'/,
      );
      expect(alone.headers.get('content-security-policy')).not.toContain('allow-scripts');
      const raw = await fetch(`${webUrl}/messages/1/raw`);
      expect(raw.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      // As sent: the header may be folded onto the next line.
      expect((await raw.text()).replace(/\r?\n\s+/g, ' ')).toContain(
        `Message-ID: ${message.messageId}`,
      );
      expect((await fetch(`${webUrl}/messages/99`)).status).toBe(404);
    } finally {
      await context.close();
    }
  });

  it('keeps the newest messages only, newest first', async () => {
    const relay = {
      host: '127.0.0.1',
      port: smtpPort,
      security: 'none' as const,
      username: null,
      password: null,
      senderAddress: DEV_MAIL_SENDER.address,
      senderName: null,
      keyAgentId: null,
    };
    for (const user of ['u_a', 'u_b', 'u_c']) {
      const caught = nextCaught();
      await sendEmail(
        relay,
        approvalEmail({
          approval: approval({ userExternalId: user }),
          environment: 'development',
          approver: 'person:alice@example.com',
          to: 'alice@example.com',
          from: { address: relay.senderAddress, name: null },
          linkUrl: LINK,
        }),
      );
      await caught;
    }
    const listed = (await (await fetch(`${webUrl}/messages.json`)).json()) as {
      id: number;
      subject: string;
    }[];
    expect(listed.map((message) => message.id)).toEqual([4, 3, 2]);
    expect(listed[0]?.subject).toContain('u_c');
  });
});

describe('the mail catcher’s port taken', () => {
  it('refuses the bind with EADDRINUSE, and binds elsewhere, without crashing the process', async () => {
    // Another program holds the port the catcher prefers, as another stack's catcher may.
    const holder = net.createServer();
    const taken = await bindServer(holder, 0);
    const other = createMailCatcher({ logger: testLogger() });
    try {
      await expect(bindServer(other.smtp, taken)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // The stack then binds a free port instead, and the catcher serves there.
      const port = await bindServer(other.smtp, 0);
      expect(port).not.toBe(taken);
    } finally {
      await other.close();
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
