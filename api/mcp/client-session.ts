import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../../infra/encryption.js';
import { derivedKey } from '../../activities/approvals/link-token.js';

/**
 * What a client declared at `initialize` that later requests need. The server keeps no state
 * between requests (any API process serves any request), so the `Mcp-Session-Id` it hands out
 * carries this itself, signed: `<key id>.<flags>.<nonce>.<mac>`.
 */
export interface ClientSession {
  /** The client shows URL-mode elicitations (MCP 2025-11-25) to its user. */
  urlElicitation: boolean;
}

const PURPOSE = 'mcp-session';
const SHAPE = /^([A-Za-z0-9_-]{1,32})\.([u-])\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

function mac(keyring: Keyring, keyId: string, signed: string): Buffer {
  return createHmac('sha256', derivedKey(keyring, PURPOSE, keyId))
    .update(signed, 'utf8')
    .digest();
}

export function issueClientSessionId(keyring: Keyring, session: ClientSession): string {
  const keyId = keyring.current.id;
  const signed = `${keyId}.${session.urlElicitation ? 'u' : '-'}.${randomBytes(12).toString('base64url')}`;
  return `${signed}.${mac(keyring, keyId, signed).toString('base64url')}`;
}

/** null for an id this service did not sign (or signed with a key it no longer has). */
export function readClientSessionId(keyring: Keyring, id: string): ClientSession | null {
  const match = SHAPE.exec(id);
  if (!match) return null;
  const [, keyId = '', flags = '', nonce = '', given = ''] = match;
  const signed = `${keyId}.${flags}.${nonce}`;
  let expected: Buffer;
  try {
    expected = mac(keyring, keyId, signed);
  } catch {
    return null; // a key id this keyring does not hold
  }
  const presented = Buffer.from(given, 'base64url');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  return { urlElicitation: flags === 'u' };
}
