import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import {
  ACCESS_LEVELS,
  AUDIENCES,
  MANAGEMENT_SCOPES,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  type AccessLevel,
  type Audience,
  type Scope,
} from '../../activities/db/api-keys.js';
import {
  createEnvironment,
  ENVIRONMENT_NAME,
  findEnvironmentByName,
  listEnvironments,
} from '../../activities/db/environments.js';
import { listOutput } from './table.js';
import type { Sql } from '../database/client.js';

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

function oneOf<T extends string>(allowed: readonly T[], what: string) {
  return (value: string): T => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${what} must be one of ${allowed.join(', ')}.`);
    }
    return value as T;
  };
}

export const parseAccess = oneOf<AccessLevel>(ACCESS_LEVELS, 'access');
export const parseAudience = oneOf<Audience>(AUDIENCES, 'audience');

export function parseScopes(value: string): Scope[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const scope of scopes) oneOf<Scope>(MANAGEMENT_SCOPES, `scope "${scope}"`)(scope);
  return scopes as Scope[];
}

/** An email, as the longest a mail system delivers to (RFC 5321: 254 characters). */
const ownerEmail = z.email().max(254);

/**
 * The person who owns a key, by the email their identity provider gives them: lower-case, as
 * the separation of duties compares it with the deciders' emails.
 */
export function parseOwner(value: string): string {
  const parsed = ownerEmail.safeParse(value.trim());
  if (!parsed.success) {
    throw new InvalidArgumentError('owner must be an email address, e.g. alice@example.com.');
  }
  return parsed.data.toLowerCase();
}

export function parseEnvironmentName(value: string): string {
  if (!ENVIRONMENT_NAME.test(value)) {
    throw new InvalidArgumentError('names start with a-z and hold up to 40 of a-z, 0-9 and -.');
  }
  return value;
}

export async function createEnvironmentCommand(sql: Sql, name: string): Promise<string> {
  const environment = await createEnvironment(sql, name);
  return `created environment ${environment.name} (${environment.id})`;
}

export async function listEnvironmentsCommand(
  sql: Sql,
  options: { json?: boolean } = {},
): Promise<string> {
  const environments = await listEnvironments(sql);
  return listOutput(
    environments.map((e) => ({ name: e.name, id: e.id, created_at: e.createdAt.toISOString() })),
    [
      ['NAME', (e) => e.name],
      ['ID', (e) => e.id],
      ['CREATED', (e) => e.created_at],
    ],
    { ...options, empty: '(no environments)' },
  );
}

export interface CreateKeyOptions {
  env: string;
  access: AccessLevel;
  scopes?: Scope[];
  agent?: string;
  audience?: Audience;
  name?: string;
  owner?: string;
}

export async function createKeyCommand(sql: Sql, options: CreateKeyOptions): Promise<string> {
  const environment = await findEnvironmentByName(sql, options.env);
  if (!environment)
    throw new Error(
      `no environment "${options.env}" (create it with: gatehouse envs create ${options.env})`,
    );
  const { key, record } = await createApiKey(sql, {
    environmentId: environment.id,
    environmentName: environment.name,
    name: options.name ?? `${options.access} key`,
    access: options.access,
    ...(options.scopes ? { scopes: options.scopes } : {}),
    ...(options.agent ? { agentId: options.agent } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
    ...(options.owner ? { owner: options.owner } : {}),
  });
  return [
    key,
    '',
    `id        ${record.id}`,
    `env       ${record.environmentName}`,
    `access    ${record.access}`,
    `scopes    ${record.scopes.join(' ') || '(none)'}`,
    `agent     ${record.agentId}`,
    `audience  ${record.audience}`,
    `owner     ${record.owner ?? '(none)'}`,
    'Store the key now: it is shown only once.',
  ].join('\n');
}

export async function listKeysCommand(
  sql: Sql,
  env: string,
  options: { json?: boolean } = {},
): Promise<string> {
  const environment = await findEnvironmentByName(sql, env);
  if (!environment) throw new Error(`no environment "${env}"`);
  const keys = await listApiKeys(sql, environment.id);
  return listOutput(
    // Never the secret: only its recognisable prefix, which was shown with it.
    keys.map((k) => ({
      id: k.id,
      prefix: `${k.prefix}…`,
      name: k.name,
      access: k.access,
      scopes: k.scopes,
      agent: k.agentId,
      audience: k.audience,
      owner: k.owner,
      status: k.revokedAt ? 'revoked' : 'active',
      created_at: k.createdAt.toISOString(),
    })),
    [
      ['ID', (k) => k.id],
      ['PREFIX', (k) => k.prefix],
      ['NAME', (k) => k.name],
      ['ACCESS', (k) => k.access],
      ['AGENT', (k) => k.agent],
      ['OWNER', (k) => k.owner ?? '-'],
      ['AUDIENCE', (k) => k.audience],
      ['STATUS', (k) => k.status],
    ],
    { ...options, empty: '(no keys)' },
  );
}

export async function revokeKeyCommand(sql: Sql, id: string): Promise<string> {
  if (!UUID.test(id) || !(await revokeApiKey(sql, id)))
    throw new Error(`no active key with id ${id}`);
  return `revoked key ${id}`;
}
