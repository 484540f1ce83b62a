import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { html, trustedHtml, type Html } from '../../api/connect/pages/html.js';
import type { Logger } from '../logger.js';
import { closeServer } from './bind-port.js';

/**
 * The mail catcher of `gatehouse dev` (infra/dev/README.md, "The mail catcher"): an SMTP server on
 * loopback that keeps every message it is sent, in memory, and a small web page listing them and
 * showing each (its HTML part framed without scripts, its text part, its source). The development
 * environment's e-mail channel points at it, so approval e-mails can be read and their links
 * followed without a real relay. Nothing leaves the machine; a restart forgets the messages.
 */

export interface CaughtMessage {
  /** 1, 2, …: its page is `/messages/<id>`. */
  id: number;
  receivedAt: Date;
  envelope: { from: string | null; to: string[] };
  from: string;
  to: string;
  subject: string;
  messageId: string | null;
  text: string | null;
  html: string | null;
  /** The header lines as sent. */
  headers: string[];
  raw: Buffer;
}

export interface MailCatcher {
  /** The SMTP server's socket, bound by `pickDevPorts` like the stack's other servers. */
  smtp: NetServer;
  /** The web page's server, bound the same way. */
  web: Server;
  /** Newest first. */
  messages(): readonly CaughtMessage[];
  /** Calls `listener` with each message caught from now on. */
  onMessage(listener: (message: CaughtMessage) => void): () => void;
  close(): Promise<void>;
}

/** Kept in memory, newest first: older ones are dropped past this many. */
export const KEPT_MESSAGES = 200;
/** A message larger than this is refused (552), as a relay would. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * The catcher's pages run no script and load nothing; a message's HTML part is shown in a
 * sandboxed frame of the same catcher (`frame-src 'self'`), itself served sandboxed.
 */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/**
 * A message's HTML part: no script ever, images only inline, and opened as a sandbox whose links
 * may take the whole tab (to the review page) when clicked.
 */
const PART_CSP =
  "sandbox allow-top-navigation-by-user-activation allow-popups allow-popups-to-escape-sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:; frame-ancestors 'self'";

function addresses(value: AddressObject | AddressObject[] | undefined): string {
  if (!value) return '';
  return (Array.isArray(value) ? value : [value]).map((address) => address.text).join(', ');
}

function caught(id: number, raw: Buffer, parsed: ParsedMail, envelope: CaughtMessage['envelope']) {
  return {
    id,
    receivedAt: new Date(),
    envelope,
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    subject: parsed.subject ?? '',
    messageId: parsed.messageId ?? null,
    text: parsed.text ?? null,
    html: typeof parsed.html === 'string' ? parsed.html : null,
    headers: parsed.headerLines.map((header) => header.line),
    raw,
  } satisfies CaughtMessage;
}

const STYLE = trustedHtml(
  `body{margin:0;padding:24px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f6f8fa}
main{max-width:960px;margin:0 auto}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px}
p{margin:0 0 12px}
a{color:#0a58ca}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #d0d7de}
th,td{padding:8px 10px;border-bottom:1px solid #d0d7de;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{color:#57606a;font-weight:600}
pre{margin:0;padding:12px 14px;background:#fff;border:1px solid #d0d7de;white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.45 Menlo,Consolas,monospace}
iframe{width:100%;height:720px;border:1px solid #d0d7de;background:#fff}
.muted{color:#57606a}`.replace(/\n/g, ''),
);

function page(title: string, body: Html): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title}</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <main>${body}</main>
      </body>
    </html>`.value;
}

const utc = (at: Date): string => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

function listPage(messages: readonly CaughtMessage[], smtpAddress: string): string {
  const rows = messages.map(
    (message) =>
      html`<tr>
        <td>${utc(message.receivedAt)}</td>
        <td>${message.from}</td>
        <td>${message.to}</td>
        <td><a href="/messages/${String(message.id)}">${message.subject || '(no subject)'}</a></td>
      </tr>`,
  );
  return page(
    'Mail · gatehouse dev',
    html`<h1>Mail caught by gatehouse dev</h1>
      <p class="muted">
        Every message sent to SMTP ${smtpAddress}, newest first (the last ${KEPT_MESSAGES}, kept
        until gatehouse dev stops). <a href="/">Refresh</a>
      </p>
      ${
        messages.length === 0
          ? html`<p>
              No message yet. Approval e-mails of the development environment arrive here.
            </p>`
          : html`<table>
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Subject</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>`
      }`,
  );
}

function messagePage(message: CaughtMessage): string {
  const id = String(message.id);
  const facts: [string, string][] = [
    ['From', message.from],
    ['To', message.to],
    ['Envelope', `${message.envelope.from ?? '<>'} → ${message.envelope.to.join(', ')}`],
    ['Subject', message.subject],
    ['Received', utc(message.receivedAt)],
    ['Message-ID', message.messageId ?? ''],
  ];
  return page(
    `${message.subject || '(no subject)'} · Mail · gatehouse dev`,
    html`<p><a href="/">All messages</a></p>
      <h1>${message.subject || '(no subject)'}</h1>
      <table>
        <tbody>
          ${facts.map(
            ([name, value]) =>
              html`<tr>
                <th scope="row">${name}</th>
                <td>${value}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>HTML part</h2>
      ${
        message.html === null
          ? html`<p class="muted">None.</p>`
          : html`<p class="muted">
                Shown without scripts; a link opens in this tab.
                <a href="/messages/${id}/html">Open it alone</a>
              </p>
              <iframe
                title="The HTML part"
                sandbox="allow-top-navigation-by-user-activation allow-popups allow-popups-to-escape-sandbox"
                src="/messages/${id}/html"
              ></iframe>`
      }
      <h2>Text part</h2>
      ${message.text === null ? html`<p class="muted">None.</p>` : html`<pre>${message.text}</pre>`}
      <h2>Source</h2>
      <p><a href="/messages/${id}/raw">The message as received</a></p>
      <h2>Headers</h2>
      <pre>${message.headers.join('\n')}</pre>`,
  );
}

/** A link in the framed part takes the whole tab, not the frame, whatever the message says. */
function framedPart(markup: string): string {
  const base = '<base target="_top">';
  const head = /<head[^>]*>/i.exec(markup);
  if (!head) return `${base}${markup}`;
  const at = head.index + head[0].length;
  return `${markup.slice(0, at)}${base}${markup.slice(at)}`;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  csp = PAGE_CSP,
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}

export function createMailCatcher(options: { logger: Logger; kept?: number }): MailCatcher {
  const kept = options.kept ?? KEPT_MESSAGES;
  const messages: CaughtMessage[] = [];
  const listeners = new Set<(message: CaughtMessage) => void>();
  let nextId = 1;

  const smtp = new SMTPServer({
    // Plain SMTP on loopback, no login: the development environment's relay is security `none`.
    secure: false,
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    size: MAX_MESSAGE_BYTES,
    banner: 'gatehouse dev mail catcher',
    logger: false,
    // Clients that linger are not waited for when the stack stops.
    closeTimeout: 1_000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          callback(
            Object.assign(new Error('Message too large for the mail catcher'), {
              responseCode: 552,
            }),
          );
          return;
        }
        const raw = Buffer.concat(chunks);
        const { mailFrom, rcptTo } = session.envelope;
        simpleParser(raw).then(
          (parsed) => {
            const message = caught(nextId++, raw, parsed, {
              from: mailFrom ? mailFrom.address : null,
              to: rcptTo.map((to) => to.address),
            });
            messages.unshift(message);
            messages.splice(kept);
            options.logger.info(
              { id: message.id, to: message.envelope.to, messageId: message.messageId },
              'mail catcher: message caught',
            );
            for (const listener of listeners) listener(message);
            callback(null, `Caught as message ${String(message.id)}`);
          },
          (error: unknown) => {
            options.logger.warn({ err: error }, 'mail catcher: a message could not be read');
            callback(Object.assign(new Error('Message not readable'), { responseCode: 554 }));
          },
        );
      });
    },
  });

  // smtp-server re-emits its socket's errors on itself; with nobody listening, a port taken while
  // the stack binds it (whose refusal bindServer answers, to bind elsewhere) would crash the
  // whole stack. Bind errors are handled there; anything later is logged.
  smtp.on('error', (error: Error) => {
    options.logger.warn({ err: error }, 'mail catcher: SMTP server error');
  });

  const smtpAddress = () => {
    const address = smtp.server.address();
    return address && typeof address === 'object'
      ? `${address.address}:${String(address.port)}`
      : '(not listening)';
  };

  const web = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'Only GET');
      return;
    }
    const path = new URL(req.url ?? '/', 'http://catcher').pathname;
    if (path === '/') {
      send(res, 200, 'text/html; charset=utf-8', listPage(messages, smtpAddress()));
      return;
    }
    if (path === '/messages.json') {
      const list = messages.map(({ raw, ...message }) => ({ ...message, size: raw.length }));
      send(res, 200, 'application/json', JSON.stringify(list));
      return;
    }
    const match = /^\/messages\/([1-9][0-9]{0,9})(\/html|\/raw)?$/.exec(path);
    const message = match ? messages.find((m) => m.id === Number(match[1])) : undefined;
    if (!match || !message) {
      send(
        res,
        404,
        'text/plain; charset=utf-8',
        'No such message (the catcher keeps the last ' +
          `${String(kept)}, until gatehouse dev stops)`,
      );
      return;
    }
    if (match[2] === '/raw') {
      send(res, 200, 'text/plain; charset=utf-8', message.raw);
      return;
    }
    if (match[2] === '/html') {
      send(res, 200, 'text/html; charset=utf-8', framedPart(message.html ?? ''), PART_CSP);
      return;
    }
    send(res, 200, 'text/html; charset=utf-8', messagePage(message));
  });

  return {
    smtp: smtp.server,
    web,
    messages: () => messages,
    onMessage(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      await closeServer(web);
      if (smtp.server.listening) {
        await new Promise<void>((resolve) => {
          smtp.close(() => {
            resolve();
          });
        });
      }
    },
  };
}
