import { createHash } from 'node:crypto';
import { oneClickLinkUrl } from '../approvals/link-token.js';
import type { Approval } from '../db/approvals.js';
import { html, type EmailHtml } from './email-html.js';

/**
 * The approval e-mail: one message to one asked person, saying what the held call is and carrying
 * two one-click links (Approve, Reject) that open the hosted review page with that choice ready.
 * Pure: the sender activity makes the decision link and hands it here, so building a message
 * touches nothing and is tested as data.
 *
 * What it shows is what the approval record holds (README, "Approval e-mail"): the request as it
 * will run (never a credential: those are never part of it), the policy that held it, who is asked,
 * until when. Nothing else: no key, no token other than the link's own, no relay setting.
 */

/** The approval as the message shows it. */
export type EmailedApproval = Pick<
  Approval,
  | 'id'
  | 'action'
  | 'scope'
  | 'agentId'
  | 'userExternalId'
  | 'request'
  | 'policyId'
  | 'policyVersion'
  | 'policyRule'
  | 'createdAt'
  | 'expiresAt'
  | 'quorum'
>;

export interface ApprovalEmailInput {
  approval: EmailedApproval;
  /** The environment's name: the same agent may run in several. */
  environment: string;
  /** The `requested_from` entry the link was made for (`person:alice@example.com`). */
  approver: string;
  /** The address the message goes to: that person's. */
  to: string;
  /** The relay's sender: its address, and the name shown with it. */
  from: EmailSender;
  /** The decision link made for `approver` on the `email` channel. */
  linkUrl: string;
}

export interface EmailSender {
  address: string;
  name: string | null;
}

export interface ApprovalEmail {
  from: EmailSender;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** `<…@…>`: the same for every send of this approval to this approver. */
  messageId: string;
  /** Headers beyond From, To, Subject, Date and Message-ID. */
  headers: Record<string, string>;
}

/** How much of the request a message shows; the review page shows all of it. */
export const SHOWN_REQUEST_CHARACTERS = 2_000;

/** A single value in a fact, the subject or the heading: longer ones are cut. */
const SHOWN_VALUE_CHARACTERS = 200;

/**
 * Characters that would let a value move or hide text around it: C0 and C1 controls (a newline in
 * a user id would start a forged line of the text part), line and paragraph separators, and the
 * bidirectional overrides and isolates (which reorder what follows them). Shown escaped, `\u202e`,
 * so the reader sees that they were there.
 */
const MOVING_IN_A_LINE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
/** The same, but line feeds and tabs stay: the request is shown as lines. */
const MOVING = /(?![\n\t])[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

const escaped = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** At most `max` characters (code points, so no pair is cut), with `…` where it was cut. */
function cut(text: string, max: number): { text: string; cut: boolean; length: number } {
  const points = Array.from(text);
  if (points.length <= max) return { text, cut: false, length: points.length };
  return { text: `${points.slice(0, max).join('')}…`, cut: true, length: points.length };
}

/** A value shown on one line. */
function oneLine(value: string): string {
  return cut(value.replace(MOVING_IN_A_LINE, escaped), SHOWN_VALUE_CHARACTERS).text;
}

/** The UTC time to the second, as the review page shows it. */
export function utcText(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** A forwarded header's value: text, or bytes that could not be stored as text. */
function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const { encoding, content } = value as Record<string, unknown>;
    if (encoding === 'base64' && typeof content === 'string') return `${content} (base64)`;
  }
  return '';
}

/** The request as it will run, as text: an action's input as JSON, or the proxied request. */
function requestText(request: Record<string, unknown>): { title: string; body: string } {
  if (typeof request.method !== 'string') {
    return {
      title: 'Input that will run',
      body: JSON.stringify(request.input ?? null, null, 2),
    };
  }
  const query = text(request.query);
  const headers =
    request.headers !== null && typeof request.headers === 'object'
      ? Object.entries(request.headers as Record<string, unknown>)
      : [];
  const body = request.body as Record<string, unknown> | null | undefined;
  const bodyLines =
    body && typeof body.content === 'string'
      ? [
          `(${String(body.bytes)} bytes, sha256 ${text(body.sha256)}${body.encoding === 'base64' ? ', binary, as base64' : ''})`,
          body.content,
        ]
      : ['(no body)'];
  return {
    title: 'Request that will be sent',
    body: [
      `${request.method} /${text(request.path)}${query ? `?${query}` : ''}`,
      ...headers.map(([name, value]) => `${name}: ${headerText(value)}`),
      '',
      ...bodyLines,
    ].join('\n'),
  };
}

interface ShownRequest {
  title: string;
  body: string;
  /** Said under it when it was cut: how much of how much. */
  note: string | null;
}

function shownRequest(request: Record<string, unknown>): ShownRequest {
  const { title, body } = requestText(request);
  const shown = cut(body.replace(MOVING, escaped).replace(/\t/g, '  '), SHOWN_REQUEST_CHARACTERS);
  const note = shown.cut
    ? `Only the first ${SHOWN_REQUEST_CHARACTERS.toLocaleString('en')} of ${shown.length.toLocaleString('en')} characters are shown here; the review page shows all of it.`
    : null;
  return { title, body: shown.text, note };
}

/** The domain of the sender's address, where the Message-ID is made; a fixed one if unusable. */
function messageIdDomain(senderAddress: string): string {
  const domain = senderAddress.slice(senderAddress.lastIndexOf('@') + 1);
  return /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(domain)
    ? domain.toLowerCase()
    : 'gatehouse.invalid';
}

/**
 * The same for every send of one approval to one addressee at one address, so a message sent again
 * after a crash (the caller records each send, but a crash may fall between the relay's answer and
 * the record) is recognisably the same message: mail clients show it once, and the relay's logs
 * can tell. The address is in it too: one group's link may go to two mailboxes, two messages.
 */
export function approvalMessageId(
  approvalId: string,
  recipient: { approver: string; to: string },
  senderAddress: string,
): string {
  const whom = createHash('sha256')
    .update(`${recipient.approver.toLowerCase()}\0${recipient.to.toLowerCase()}`, 'utf8')
    .digest('hex');
  return `<approval.${approvalId}.${whom.slice(0, 16)}@${messageIdDomain(senderAddress)}>`;
}

interface Fact {
  name: string;
  value: string;
}

function factsOf(input: ApprovalEmailInput): Fact[] {
  const { approval } = input;
  const rule = approval.policyRule ? ` (${oneLine(approval.policyRule)})` : '';
  return [
    { name: 'Agent', value: oneLine(approval.agentId) },
    { name: 'For user', value: oneLine(approval.userExternalId) },
    { name: 'Action', value: `${oneLine(approval.action)} (${approval.scope})` },
    { name: 'Environment', value: oneLine(input.environment) },
    {
      name: 'Policy',
      value: `${oneLine(approval.policyId)}, version ${String(approval.policyVersion)}${rule}`,
    },
    { name: 'Asked', value: utcText(approval.createdAt) },
    { name: 'Valid until', value: utcText(approval.expiresAt) },
    { name: 'Deciding as', value: oneLine(input.approver) },
    ...(approval.quorum > 1
      ? [{ name: 'Approvals', value: `${String(approval.quorum)} different people must approve` }]
      : []),
    { name: 'Approval', value: approval.id },
  ];
}

const FONT = `font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif`;
const MONO = `font-family:Menlo,Consolas,'Liberation Mono',monospace`;
const INK = '#1b1f24';
const MUTED = '#57606a';
const LINE = '#d0d7de';
const TILE = '#f6f8fa';
/** White on these is above 4.5:1 (WCAG AA for text). */
const APPROVE = '#1a7f37';
const REJECT = '#b42318';

function button(label: string, href: string, colour: string): EmailHtml {
  // A table cell with the colour and a padded link: how a button renders in Outlook too.
  return html`<td style="border-radius:6px;background-color:${colour};">
    <a
      href="${href}"
      style="display:inline-block;padding:14px 36px;${FONT};font-size:18px;font-weight:bold;line-height:1.2;color:#ffffff;text-decoration:none;border-radius:6px;"
      >${label}</a
    >
  </td>`;
}

function htmlPart(
  input: ApprovalEmailInput,
  parts: { subject: string; heading: string; facts: Fact[]; request: ShownRequest },
  links: { approve: string; reject: string },
): string {
  const { approval } = input;
  const cell = `padding:8px 12px;border-bottom:1px solid ${LINE};text-align:left;vertical-align:top;`;
  const body = html`<!doctype html>
    <html lang="en" dir="ltr">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light" />
        <title>${parts.subject}</title>
      </head>
      <body style="margin:0;padding:0;background-color:${TILE};">
        <table
          role="presentation"
          width="100%"
          cellpadding="0"
          cellspacing="0"
          border="0"
          style="background-color:${TILE};"
        >
          <tr>
            <td align="center" style="padding:24px 12px;">
              <table
                role="presentation"
                width="100%"
                cellpadding="0"
                cellspacing="0"
                border="0"
                style="max-width:640px;background-color:#ffffff;border:1px solid ${LINE};border-radius:8px;"
              >
                <tr>
                  <td
                    style="padding:28px 28px 8px;${FONT};font-size:16px;line-height:1.5;color:${INK};"
                  >
                    <p style="margin:0 0 8px;font-size:14px;font-weight:bold;color:${MUTED};">
                      Approval requested
                    </p>
                    <h1
                      style="margin:0 0 12px;font-size:22px;line-height:1.3;color:${INK};overflow-wrap:anywhere;"
                    >
                      ${parts.heading}
                    </h1>
                    <p style="margin:0 0 20px;">
                      The call is held until someone decides. Nothing runs unless it is approved,
                      and what runs is exactly what is shown below.
                    </p>
                    <table
                      style="width:100%;border-collapse:collapse;font-size:15px;border-top:1px solid ${LINE};"
                    >
                      <caption style="text-align:left;padding:0 0 6px;font-weight:bold;">
                        The held call
                      </caption>
                      <tbody>
                        ${parts.facts.map(
                          (fact) =>
                            html`<tr>
                              <th
                                scope="row"
                                style="${cell}width:32%;font-weight:bold;color:${MUTED};"
                              >
                                ${fact.name}
                              </th>
                              <td style="${cell}overflow-wrap:anywhere;">${fact.value}</td>
                            </tr>`,
                        )}
                      </tbody>
                    </table>
                    <h2 style="margin:24px 0 8px;font-size:17px;color:${INK};">
                      ${parts.request.title}
                    </h2>
                    <pre
                      style="margin:0;padding:12px 14px;background-color:${TILE};border:1px solid ${LINE};border-radius:6px;${MONO};font-size:13px;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere;color:${INK};"
                    >
${parts.request.body}</pre>
                    ${parts.request.note && html`<p style="margin:8px 0 0;font-size:14px;color:${MUTED};">${parts.request.note}</p>`}
                    <h2 style="margin:28px 0 12px;font-size:17px;color:${INK};">Your decision</h2>
                    <table role="presentation" cellpadding="0" cellspacing="0" border="0">
                      <tr>
                        ${button('Approve', links.approve, APPROVE)}
                        <td style="width:16px;">&nbsp;</td>
                        ${button('Reject', links.reject, REJECT)}
                      </tr>
                    </table>
                    <p style="margin:16px 0 0;font-size:14px;color:${MUTED};">
                      Each button opens the review page with that choice ready: nothing is decided
                      until you press it there. The links decide as ${oneLine(input.approver)} until
                      ${utcText(approval.expiresAt)}; do not forward this message.
                    </p>
                  </td>
                </tr>
                <tr>
                  <td
                    style="padding:16px 28px 24px;${FONT};font-size:13px;line-height:1.5;color:${MUTED};border-top:1px solid ${LINE};"
                  >
                    Sent by Gatehouse because policy ${oneLine(approval.policyId)} asks
                    ${oneLine(input.approver)} to decide this call. An automatic message: replies
                    are not read.
                  </td>
                </tr>
              </table>
            </td>
          </tr>
        </table>
      </body>
    </html> `;
  return body.value;
}

function textPart(
  input: ApprovalEmailInput,
  parts: { heading: string; facts: Fact[]; request: ShownRequest },
  links: { approve: string; reject: string },
): string {
  // Name, colon, at least two spaces: the values line up.
  const width = Math.max(...parts.facts.map((fact) => fact.name.length)) + 3;
  // Every line of the request is indented, so nothing in it can pass for a line of the message.
  const request = parts.request.body
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return [
    parts.heading,
    '',
    'The call is held until someone decides. Nothing runs unless it is approved, and what runs is',
    'exactly what is shown below.',
    '',
    ...parts.facts.map((fact) => `${`${fact.name}:`.padEnd(width)}${fact.value}`),
    '',
    `${parts.request.title}:`,
    '',
    request,
    '',
    ...(parts.request.note ? [parts.request.note, ''] : []),
    `Approve: ${links.approve}`,
    `Reject:  ${links.reject}`,
    '',
    'Each link opens the review page with that choice ready: nothing is decided until you press',
    `the button there. The links decide as ${oneLine(input.approver)} until ${utcText(input.approval.expiresAt)};`,
    'do not forward this message.',
    '',
    '-- ',
    `Sent by Gatehouse because policy ${oneLine(input.approval.policyId)} asks ${oneLine(input.approver)} to decide this call.`,
    'An automatic message: replies are not read.',
    '',
  ].join('\n');
}

/** The message for one approver: subject, HTML and text parts, and its headers. */
export function approvalEmail(input: ApprovalEmailInput): ApprovalEmail {
  const { approval } = input;
  const action = oneLine(approval.action);
  const user = oneLine(approval.userExternalId);
  const agent = oneLine(approval.agentId);
  const subject = `Approve ${action} for ${user}? (${agent})`;
  const heading = `${agent} asks to run ${action} for ${user}`;
  const facts = factsOf(input);
  const request = shownRequest(approval.request);
  const links = {
    approve: oneClickLinkUrl(input.linkUrl, 'approve'),
    reject: oneClickLinkUrl(input.linkUrl, 'reject'),
  };
  return {
    from: input.from,
    to: input.to,
    subject,
    text: textPart(input, { heading, facts, request }, links),
    html: htmlPart(input, { subject, heading, facts, request }, links),
    messageId: approvalMessageId(approval.id, input, input.from.address),
    headers: {
      // RFC 3834: vacation responders and auto-replies stay quiet.
      'Auto-Submitted': 'auto-generated',
      // Exchange's own switch for out-of-office and delivery receipts.
      'X-Auto-Response-Suppress': 'All',
      'X-Gatehouse-Approval': approval.id,
    },
  };
}
