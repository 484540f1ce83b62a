import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

export type LinkPurpose = 'connect' | 'reconnect';

export interface ConnectLink {
  id: string;
  environmentId: string;
  connectedUserId: string;
  app: string;
  purpose: LinkPurpose;
  connectionId: string | null;
  redirectUrl: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();
const tokenAad = (id: string) => `connect_link:${id}:token`;

const columns = (sql: Db) => sql`
  id, environment_id, connected_user_id, app, purpose, connection_id, redirect_url, expires_at, used_at, created_at`;

export interface NewLink {
  environmentId: string;
  connectedUserId: string;
  app: string;
  purpose: LinkPurpose;
  connectionId?: string;
  redirectUrl?: string;
  ttlSeconds: number;
}

/** A link and the secret token its URL carries (the URL is the only place the token appears). */
export async function createConnectLink(
  sql: Db,
  keyring: Keyring,
  input: NewLink,
): Promise<{ link: ConnectLink; token: string }> {
  const id = uuidv7();
  const token = randomBytes(24).toString('base64url');
  const [link]: [ConnectLink?] = await sql`
    insert into connect_links (id, environment_id, connected_user_id, app, purpose, connection_id,
      token_hash, token_sealed, redirect_url, expires_at)
    values (${id}, ${input.environmentId}, ${input.connectedUserId}, ${input.app}, ${input.purpose},
      ${input.connectionId ?? null}, ${hashToken(token)}, ${seal(keyring, token, tokenAad(id))},
      ${input.redirectUrl ?? null}, now() + make_interval(secs => ${input.ttlSeconds}))
    returning ${columns(sql)}`;
  if (!link) throw new Error('connect link insert returned nothing');
  return { link, token };
}

export async function findLinkByToken(sql: Db, token: string): Promise<ConnectLink | null> {
  const [row]: [ConnectLink?] = await sql`
    select ${columns(sql)} from connect_links where token_hash = ${hashToken(token)}`;
  return row ?? null;
}

export async function findLinkById(sql: Db, id: string): Promise<ConnectLink | null> {
  const [row]: [ConnectLink?] =
    await sql`select ${columns(sql)} from connect_links where id = ${id}`;
  return row ?? null;
}

/**
 * The one active reconnect link of a connection (single use, valid 7 days), with its token so the
 * same URL can be handed out again until it is used or expires.
 */
export async function findActiveReconnectLink(
  sql: Db,
  keyring: Keyring,
  connectionId: string,
): Promise<{ link: ConnectLink; token: string } | null> {
  const [row]: [(ConnectLink & { tokenSealed: string })?] = await sql`
    select ${columns(sql)}, token_sealed from connect_links
    where connection_id = ${connectionId} and purpose = 'reconnect' and used_at is null and expires_at > now()
    order by created_at desc limit 1`;
  if (!row) return null;
  const { tokenSealed, ...link } = row;
  return { link, token: open(keyring, tokenSealed, tokenAad(link.id)) };
}

/** Marks the link used; false when another request used it first (single use). */
export async function consumeLink(sql: Db, id: string): Promise<boolean> {
  const rows =
    await sql`update connect_links set used_at = now() where id = ${id} and used_at is null returning id`;
  return rows.length === 1;
}
