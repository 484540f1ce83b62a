import { ApplicationFailure } from '@temporalio/common';
import nodemailer from 'nodemailer';
import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { decisionLinks } from '../approvals/decision-links.js';
import { findApproval } from '../db/approvals.js';
import { findEnvironmentById } from '../db/environments.js';
import { approvalEmail, type ApprovalEmail } from './approval-email.js';

/**
 * Sending an approval e-mail through the environment's SMTP relay (README, "Approval e-mail").
 * The decision link is made here, inside the activity, as the webhook delivery makes its links: no
 * token ever travels through Temporal, and the relay's password is read by the caller's activity
 * from Postgres and handed here, never through a workflow either.
 */

/**
 * The relay as the sender needs it: the environment's `email` channel with its password open
 * (activities/db/notification-channels.ts reads it so).
 */
export interface SmtpRelay {
  host: string;
  port: number;
  /** `tls`: TLS from the first byte (465); `starttls`: plain, then STARTTLS, required; `none`. */
  security: 'starttls' | 'tls' | 'none';
  username: string | null;
  password: string | null;
  senderAddress: string;
  senderName: string | null;
  /**
   * The agent of the API key that set the relay (null: the CLI or the console did). Whoever runs
   * the relay reads every link sent through it, so a relay an agent set never decides that
   * agent's calls (the link records it; see link-provenance.ts).
   */
  keyAgentId: string | null;
}

/** One message: which approval, for whom, to which address. */
export interface ApprovalEmailRequest {
  environmentId: string;
  approvalId: string;
  /**
   * The `requested_from` entry the message answers (`person:ada@example.com`, `group:finance`),
   * or `role:approver`: the link decides as it.
   */
  addressee: string;
  /** The one address it goes to. */
  to: string;
  /** The agent of the key that chose this destination (a route), or null. */
  keyAgentId: string | null;
}

export type SentApprovalEmail =
  | {
      outcome: 'sent';
      /** The same for every send of this approval to this addressee and address. */
      messageId: string;
      /** The relay's last answer (`250 OK: queued as …`). */
      response: string;
    }
  /** Decided, expired or gone by the time the message would go: nothing is sent. */
  | { outcome: 'not_pending'; status: string };

/** How long each step of the SMTP conversation may take, in milliseconds. */
export interface SmtpTimeouts {
  /** To open the TCP connection. */
  connection: number;
  /** From connected to the relay's 220 greeting. */
  greeting: number;
  /** Any silence on the socket after that. */
  socket: number;
}

/**
 * Well under the caller's activity timeout, so a relay that hangs fails this attempt and Temporal
 * retries rather than the attempt being lost: nodemailer's own defaults are 2 min, 30 s and 10 min.
 */
export const SMTP_TIMEOUTS: SmtpTimeouts = { connection: 10_000, greeting: 10_000, socket: 30_000 };

/** What the failures are called (the ApplicationFailure's `type`), and which may be retried. */
export const EMAIL_FAILURES = {
  /** Connection refused or reset, DNS, a timeout: the relay may be back soon. */
  unreachable: { type: 'EmailRelayUnreachable', retryable: true },
  /** A 4xx reply (421 busy, 450 mailbox unavailable, 451 local error): try again later. */
  deferred: { type: 'EmailDeferred', retryable: true },
  /** A 5xx reply to the recipient: the address does not take mail. */
  recipientRejected: { type: 'EmailRecipientRejected', retryable: false },
  /** A 5xx reply to the sender or the message: the relay refuses it as it is. */
  rejected: { type: 'EmailRejected', retryable: false },
  /** TLS, a login refused, settings the relay cannot work with: an operator must change them. */
  misconfigured: { type: 'EmailRelayMisconfigured', retryable: false },
  /** An address that is not one plain address: no retry can fix it. */
  badAddress: { type: 'EmailAddressInvalid', retryable: false },
} as const;

type EmailFailure = (typeof EMAIL_FAILURES)[keyof typeof EMAIL_FAILURES];

/** What nodemailer adds to its errors. */
interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  command?: string;
  response?: string;
}

const UNREACHABLE_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'EPROTOCOL',
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
const MISCONFIGURED_CODES = new Set(['ETLS', 'EREQUIRETLS', 'ECONFIG']);

/** Which failure an error of nodemailer's is: by the relay's reply code first, then its code. */
export function classifyEmailFailure(error: SmtpError): EmailFailure {
  const code = error.code ?? '';
  // A refused login (535) is the relay's settings, whatever its reply code says.
  if (code === 'EAUTH' || code === 'ENOAUTH') return EMAIL_FAILURES.misconfigured;
  const reply = error.responseCode;
  if (reply !== undefined && reply >= 400 && reply < 500) return EMAIL_FAILURES.deferred;
  if (reply !== undefined && reply >= 500 && reply < 600) {
    return error.command === 'RCPT TO' ? EMAIL_FAILURES.recipientRejected : EMAIL_FAILURES.rejected;
  }
  if (MISCONFIGURED_CODES.has(code)) return EMAIL_FAILURES.misconfigured;
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return EMAIL_FAILURES.rejected;
  if (UNREACHABLE_CODES.has(code)) return EMAIL_FAILURES.unreachable;
  // Anything else (a bug, a stream error) is given the benefit of a retry.
  return EMAIL_FAILURES.unreachable;
}

/** The relay's words, cut: they are another server's, and go into Temporal's history. */
const quoted = (text: string | undefined): string =>
  text === undefined ? '' : text.replace(/\s+/g, ' ').slice(0, 300);

function failureOf(error: SmtpError, relay: Pick<SmtpRelay, 'host' | 'port'>): ApplicationFailure {
  const kind = classifyEmailFailure(error);
  const at = `${relay.host}:${String(relay.port)}`;
  const reply = error.responseCode === undefined ? '' : ` (${String(error.responseCode)})`;
  const message = `Sending through the SMTP relay ${at} failed${reply}: ${quoted(error.message)}`;
  const details = {
    code: error.code ?? null,
    responseCode: error.responseCode ?? null,
    command: error.command ?? null,
  };
  return kind.retryable
    ? ApplicationFailure.retryable(message, kind.type, details)
    : ApplicationFailure.nonRetryable(message, kind.type, details);
}

/**
 * One plain address, as the envelope takes it: no name, no list, nothing a header parser could
 * read as a second recipient.
 */
const PLAIN_ADDRESS = /^[^\s@,;:<>()[\]\\"]+@[^\s@,;:<>()[\]\\"]+$/;

function checkAddress(what: string, address: string): void {
  if (address.length <= 320 && PLAIN_ADDRESS.test(address)) return;
  throw ApplicationFailure.nonRetryable(
    `The ${what} address is not one plain e-mail address`,
    EMAIL_FAILURES.badAddress.type,
  );
}

/**
 * Sends one message through the relay with bounded timeouts; a failure is an ApplicationFailure
 * whose type says what happened and whether a retry can help (EMAIL_FAILURES). A new connection
 * per message: approval e-mails are few, and nothing is left open between activities.
 */
export async function sendEmail(
  relay: SmtpRelay,
  message: ApprovalEmail,
  timeouts: SmtpTimeouts = SMTP_TIMEOUTS,
): Promise<{ response: string }> {
  checkAddress('sender', message.from.address);
  checkAddress('recipient', message.to);
  const transport = nodemailer.createTransport({
    host: relay.host,
    port: relay.port,
    secure: relay.security === 'tls',
    requireTLS: relay.security === 'starttls',
    // `none` is what the operator chose (a relay on loopback, the dev mail catcher): no STARTTLS
    // even if offered, rather than one that fails on a certificate nobody asked for.
    ignoreTLS: relay.security === 'none',
    tls: { minVersion: 'TLSv1.2', servername: relay.host },
    ...(relay.username !== null
      ? { auth: { user: relay.username, pass: relay.password ?? '' } }
      : {}),
    connectionTimeout: timeouts.connection,
    greetingTimeout: timeouts.greeting,
    socketTimeout: timeouts.socket,
    dnsTimeout: timeouts.connection,
    // The message is built here: no part of it is a file or URL to fetch.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });
  try {
    const info = await transport.sendMail({
      from: { name: message.from.name ?? '', address: message.from.address },
      to: message.to,
      envelope: { from: message.from.address, to: [message.to] },
      subject: message.subject,
      text: message.text,
      html: message.html,
      messageId: message.messageId,
      headers: message.headers,
    });
    return { response: info.response };
  } catch (error) {
    throw failureOf(error as SmtpError, relay);
  } finally {
    transport.close();
  }
}

export interface SendApprovalEmailDeps {
  sql: Db;
  config: Pick<Config, 'api' | 'encryption'>;
  logger: Logger;
}

/**
 * The approval e-mail for one addressee, sent: reads the approval (nothing is sent once it is no
 * longer pending), makes its decision link on the `email` channel (the same token at every attempt,
 * stored hashed), builds the message and sends it. Safe to run again: the link is the same row and
 * the Message-ID the same, so a second send after a crash is at worst the same message twice.
 */
export async function sendApprovalEmail(
  deps: SendApprovalEmailDeps,
  relay: SmtpRelay,
  request: ApprovalEmailRequest,
  timeouts: SmtpTimeouts = SMTP_TIMEOUTS,
): Promise<SentApprovalEmail> {
  const [approval, environment] = await Promise.all([
    findApproval(deps.sql, request.environmentId, request.approvalId),
    findEnvironmentById(deps.sql, request.environmentId),
  ]);
  if (!approval || !environment) return { outcome: 'not_pending', status: 'unknown' };
  if (approval.status !== 'pending' || approval.expiresAt.getTime() <= Date.now()) {
    return { outcome: 'not_pending', status: approval.status };
  }
  const [link] = await decisionLinks(
    deps.sql,
    deps.config,
    approval,
    { channel: 'email', keyAgentId: linkKeyAgent(approval.agentId, relay, request) },
    [request.addressee],
  );
  if (!link) throw new Error('no decision link was made');
  const message = approvalEmail({
    approval,
    environment: environment.name,
    approver: request.addressee,
    to: request.to,
    from: { address: relay.senderAddress, name: relay.senderName },
    linkUrl: link.url,
  });
  const { response } = await sendEmail(relay, message, timeouts);
  // Never the message or its links: they carry the token.
  deps.logger.info(
    { approvalId: approval.id, addressee: request.addressee, messageId: message.messageId },
    'approval e-mail sent',
  );
  return { outcome: 'sent', messageId: message.messageId, response: quoted(response) };
}

/**
 * The key agent the link records. Two keys may have chosen where it went (the relay's and the
 * route's); a link records one, so the held agent's own, when it is either, is the one kept: its
 * link then never decides its calls. Otherwise the route's, then the relay's.
 */
function linkKeyAgent(
  heldAgentId: string,
  relay: Pick<SmtpRelay, 'keyAgentId'>,
  request: Pick<ApprovalEmailRequest, 'keyAgentId'>,
): string | null {
  const through = [request.keyAgentId, relay.keyAgentId];
  return (
    through.find((agent) => agent === heldAgentId) ??
    through.find((agent) => agent !== null) ??
    null
  );
}
