import { createHash, createHmac, hkdfSync } from 'node:crypto';
import type { Keyring } from '../../infra/encryption.js';
import { ANY_APPROVER } from '../../workflows/decider-rules.js';
import type { LinkChannel, LinkProvenance } from './link-provenance.js';

/**
 * Decision links: the signed URLs a person decides an approval through. A link's token is an HMAC
 * of what the link is (its approval, its approver) and where it went (its channel, and the agent of
 * the key it went through) under a key derived from the encryption key, so the webhook activity
 * makes the same tokens at every delivery attempt without a token ever being stored or passed
 * through Temporal: the database keeps only `hashLinkToken(token)`. Links of different channels
 * differ, so each stored row's provenance is the one its token was issued with.
 */

/**
 * The approver named by the one link made when `requested_from` is empty: `role:approver`, whoever
 * may decide. A decision through it is labelled `role:approver (decision link)`, so audit shows it
 * came through a generic link and not from a key or a person. Links stored before it was named so
 * name `approval-link` (LEGACY_ANY_APPROVER), and still decide, labelled as they were.
 */
export const GENERIC_APPROVER = ANY_APPROVER;

/** base64url of 32 bytes. */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A purpose-bound key: a token and a form field made under different labels never collide. */
export function derivedKey(keyring: Keyring, purpose: string, keyId = keyring.current.id): Buffer {
  const key = keyId === keyring.current.id ? keyring.current.key : keyring.previous?.[keyId];
  if (!key) throw new Error(`no encryption key with id "${keyId}"`);
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `gatehouse ${purpose}`, 32));
}

/** What a link's token is made of. */
export interface LinkIdentity extends LinkProvenance {
  approvalId: string;
  approver: string;
  channel: LinkChannel;
}

/**
 * Tokens issued before migration 017 were an HMAC of `approval-link\0<approval id>\0<approver>`
 * under the same key. Those links still open (they are looked up by hash); the `v2` label and
 * the JSON list keep a new message from ever equalling an old one, whatever the names hold.
 */
export function approvalLinkToken(keyring: Keyring, link: LinkIdentity): string {
  const message = JSON.stringify([link.approvalId, link.approver, link.channel, link.keyAgentId]);
  return createHmac('sha256', derivedKey(keyring, 'approval-link'))
    .update(`approval-link/v2\0${message}`, 'utf8')
    .digest('base64url');
}

export const hashLinkToken = (token: string): Buffer =>
  createHash('sha256').update(token, 'utf8').digest();

/** Where a link token is opened: the hosted approval page. */
export const APPROVAL_PAGE_PATH = '/approvals/review';

export function approvalLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}${APPROVAL_PAGE_PATH}/${token}`;
}

/** What a one-click link pre-selects on the page: still nothing is decided until its POST. */
export type LinkChoice = 'approve' | 'reject';

/** The query parameter that carries it: the token stays the path, so one link row serves both. */
export const LINK_CHOICE_PARAM = 'choice';

/**
 * A decision link that opens the page with one choice ready to confirm (an e-mail's Approve and
 * Reject buttons). The choice is not signed: it only says which button the page offers first, and
 * the decision is the form's, posted from the page.
 */
export function oneClickLinkUrl(linkUrl: string, choice: LinkChoice): string {
  return `${linkUrl}?${LINK_CHOICE_PARAM}=${choice}`;
}

/** The choice a page request carries, or null for anything else (absent, repeated, unknown). */
export function linkChoiceOf(query: unknown): LinkChoice | null {
  return query === 'approve' || query === 'reject' ? query : null;
}
