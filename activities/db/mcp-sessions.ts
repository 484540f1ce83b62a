import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import type { Caller } from './api-keys.js';

/** An MCP address for one user, as stored: the secret itself is not here. */
export interface McpSession {
  id: string;
  environmentId: string;
  keyId: string;
  agentId: string;
  userExternalId: string;
  /** null: every app. */
  apps: string[] | null;
  /** null: every action, as `<app>.<action>`. */
  actions: string[] | null;
  includeUnconnectedApps: boolean;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
}

export type NewMcpSession = Pick<
  McpSession,
  | 'environmentId'
  | 'keyId'
  | 'agentId'
  | 'userExternalId'
  | 'apps'
  | 'actions'
  | 'includeUnconnectedApps'
> & { ttlSeconds: number };

/** A session found by its secret, with what it may do: the minting key as it is now. */
export interface McpSessionStanding {
  session: McpSession;
  /** The minting key's caller, or null once that key is revoked (the session then ends too). */
  caller: Caller | null;
}

/** Recognisable by secret scanners, like API keys (`gk_…`). */
export const MCP_SECRET_PATTERN = /^gkmcp_[A-Za-z0-9_-]{32}$/;

const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

const columns = (sql: Db) => sql`
  s.id, s.environment_id, s.key_id, s.agent_id, s.user_external_id, s.apps, s.actions,
  s.include_unconnected_apps, s.expires_at, s.revoked_at, s.created_at`;

/** Stores a session and returns its secret, which is never stored and never shown again. */
export async function createMcpSession(
  sql: Db,
  input: NewMcpSession,
): Promise<{ session: McpSession; secret: string }> {
  const secret = `gkmcp_${randomBytes(24).toString('base64url')}`;
  const [row]: [McpSession?] = await sql`
    insert into mcp_sessions as s (id, environment_id, key_id, agent_id, user_external_id, apps,
      actions, include_unconnected_apps, secret_hash, expires_at)
    values (${uuidv7()}, ${input.environmentId}, ${input.keyId}, ${input.agentId},
      ${input.userExternalId}, ${input.apps}, ${input.actions},
      ${input.includeUnconnectedApps}, ${hashSecret(secret)},
      now() + make_interval(secs => ${input.ttlSeconds}))
    returning ${columns(sql)}`;
  if (!row) throw new Error('mcp session insert returned nothing');
  return { session: row, secret };
}

export async function findMcpSessionBySecret(
  sql: Db,
  secret: string,
): Promise<McpSessionStanding | null> {
  const [row]: [(McpSession & { keyRevokedAt: Date | null } & Omit<Caller, 'agentId'>)?] =
    await sql`
    select ${columns(sql)}, k.revoked_at as key_revoked_at, k.name as key_name,
           e.name as environment_name, k.access, k.scopes, k.audience
    from mcp_sessions s
    join api_keys k on k.id = s.key_id
    join environments e on e.id = s.environment_id
    where s.secret_hash = ${hashSecret(secret)}`;
  if (!row) return null;
  const { keyRevokedAt, keyName, environmentName, access, scopes, audience, ...session } = row;
  return {
    session,
    caller:
      keyRevokedAt === null
        ? {
            keyId: session.keyId,
            keyName,
            environmentId: session.environmentId,
            environmentName,
            access,
            scopes,
            agentId: session.agentId,
            audience,
          }
        : null,
  };
}

/**
 * Revokes the session (the first revocation's time is kept) if `by` may: a key of the agent
 * that minted it, or one with scope `mcp_sessions:manage`. Null when the environment has no such
 * session, or none this caller may revoke: the two are not told apart.
 */
export async function revokeMcpSession(
  sql: Db,
  environmentId: string,
  id: string,
  by: { agentId: string; mayManage: boolean },
): Promise<McpSession | null> {
  const [row]: [McpSession?] = await sql`
    update mcp_sessions s set revoked_at = coalesce(s.revoked_at, now())
    where s.environment_id = ${environmentId} and s.id = ${id}
      and (${by.mayManage} or s.agent_id = ${by.agentId})
    returning ${columns(sql)}`;
  return row ?? null;
}

/**
 * The apps a user can call: those with a connection that is not revoked. An expired one counts,
 * since calling it is how the user gets its reconnect link.
 */
export async function connectedAppsOf(
  sql: Db,
  environmentId: string,
  userExternalId: string,
): Promise<Set<string>> {
  const rows = await sql<{ app: string }[]>`
    select distinct c.app from connections c
    join connected_users u on u.id = c.connected_user_id
    where u.environment_id = ${environmentId} and u.external_id = ${userExternalId}
      and c.status <> 'revoked'`;
  return new Set(rows.map((row) => row.app));
}
