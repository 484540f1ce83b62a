import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';

/** Access levels: read_only may only read; standard may do all but export tokens; full all. */
export const ACCESS_LEVELS = ['read_only', 'standard', 'full'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

export const AUDIENCES = ['backend', 'business'] as const;
export type Audience = (typeof AUDIENCES)[number];

/**
 * The management interface's scopes, plus `policies:*` (who may read and who may govern
 * policies), `mcp_sessions:manage` (revoking MCP sessions another agent minted), `apps:*` (reading
 * and changing the remote MCP servers registered as apps), `grants:*` (reading and revoking the
 * grants approvers made), `people:*` (reading and changing which of the identity provider's
 * groups hold which role: who may approve, govern and administer) and `notifications:*` (reading
 * and changing where approvers are told of held calls: channels, routes, opt-outs).
 */
export const MANAGEMENT_SCOPES = [
  'funded_access:read',
  'funded_access:manage',
  'auth_configs:read',
  'auth_configs:manage',
  'approvals:read',
  'approvals:decide',
  'connect_settings:read',
  'connect_settings:manage',
  'policies:read',
  'policies:manage',
  'mcp_sessions:manage',
  'apps:read',
  'apps:manage',
  'grants:read',
  'grants:manage',
  'people:read',
  'people:manage',
  'notifications:read',
  'notifications:manage',
] as const;
export type Scope = (typeof MANAGEMENT_SCOPES)[number];

/**
 * Reads the keys agents call with do not get by default: an agent does not see the grants made
 * for it, nor who may decide its calls (the people and their roles), nor where those people are
 * told of its held calls and who asked not to be.
 */
const AGENTS_NEVER_READ: ReadonlySet<Scope> = new Set<Scope>([
  'grants:read',
  'people:read',
  'notifications:read',
]);

/**
 * Separation of duties: the keys agents call with (standard) may read but neither
 * decide approvals nor change policies or settings, so a governed agent cannot loosen its own
 * governance. Deciding and governing take a full key, or scopes granted explicitly.
 */
export function defaultScopes(access: AccessLevel): Scope[] {
  switch (access) {
    case 'read_only':
    case 'standard':
      return MANAGEMENT_SCOPES.filter((s) => s.endsWith(':read') && !AGENTS_NEVER_READ.has(s));
    case 'full':
      return [...MANAGEMENT_SCOPES];
  }
}

/** What a request is allowed to do, once its key has been recognised. */
export interface Caller {
  keyId: string;
  keyName: string;
  environmentId: string;
  environmentName: string;
  access: AccessLevel;
  scopes: Scope[];
  agentId: string;
  audience: Audience;
}

export interface ApiKeyRecord {
  id: string;
  environmentName: string;
  name: string;
  prefix: string;
  access: AccessLevel;
  scopes: Scope[];
  agentId: string;
  audience: Audience;
  /** The person who owns the key (an email, lower-case), or null when nobody claimed it. */
  owner: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface NewApiKey {
  environmentId: string;
  environmentName: string;
  name: string;
  access: AccessLevel;
  scopes?: Scope[];
  agentId?: string;
  audience?: Audience;
  /**
   * The person who owns the key, an email. Separation of duties: its owner never decides the
   * held calls of the key's agent. Stored lower-case, as those checks compare it.
   */
  owner?: string;
}

/** What is stored of a key, and what the API's key cache is keyed by (api/http/key-cache.ts). */
export function keyHash(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * Creates a key and returns its secret, which is never stored and never shown again. The
 * `gk_<environment>_` prefix lets secret scanners recognise a leaked key.
 */
export async function createApiKey(
  sql: Db,
  input: NewApiKey,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `gk_${input.environmentName}_${randomBytes(24).toString('base64url')}`;
  const id = uuidv7();
  const scopes = input.scopes ?? defaultScopes(input.access);
  const agentId = input.agentId ?? input.name;
  const audience = input.audience ?? 'backend';
  const owner = input.owner?.toLowerCase() ?? null;
  // The random part may itself hold `_`: count from the environment name, not the last `_`.
  const prefix = key.slice(0, `gk_${input.environmentName}_`.length + 4);
  const [row]: [{ createdAt: Date }?] = await sql`
    insert into api_keys (id, environment_id, name, prefix, secret_hash, access, scopes, agent_id, audience, owner)
    values (${id}, ${input.environmentId}, ${input.name}, ${prefix}, ${keyHash(key)},
            ${input.access}, ${scopes}, ${agentId}, ${audience}, ${owner})
    returning created_at`;
  if (!row) throw new Error('api key insert returned nothing');
  return {
    key,
    record: {
      id,
      environmentName: input.environmentName,
      name: input.name,
      prefix,
      access: input.access,
      scopes,
      agentId,
      audience,
      owner,
      createdAt: row.createdAt,
      revokedAt: null,
    },
  };
}

/** Finds the live key with this secret; revoked and unknown keys are indistinguishable. */
export async function findCallerByKey(sql: Db, key: string): Promise<Caller | null> {
  const [row]: [Caller?] = await sql`
    select k.id as key_id, k.name as key_name, k.environment_id, e.name as environment_name,
           k.access, k.scopes, k.agent_id, k.audience
    from api_keys k join environments e on e.id = k.environment_id
    where k.secret_hash = ${keyHash(key)} and k.revoked_at is null`;
  return row ?? null;
}

/** Revokes a key; returns false when no live key has that id. */
export async function revokeApiKey(sql: Db, id: string): Promise<boolean> {
  const rows = await sql`
    update api_keys set revoked_at = now() where id = ${id} and revoked_at is null returning id`;
  return rows.length === 1;
}

export async function listApiKeys(sql: Db, environmentId: string): Promise<ApiKeyRecord[]> {
  return sql<ApiKeyRecord[]>`
    select k.id, e.name as environment_name, k.name, k.prefix, k.access, k.scopes, k.agent_id,
           k.audience, k.owner, k.created_at, k.revoked_at
    from api_keys k join environments e on e.id = k.environment_id
    where k.environment_id = ${environmentId}
    order by k.created_at`;
}
