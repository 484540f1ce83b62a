import { InvalidArgumentError } from 'commander';
import { v7 as uuidv7 } from 'uuid';
import {
  changeGroupRoles,
  type RoleMappingActor,
} from '../../activities/audit/role-mapping-changes.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { listRoleMappings, ROLES, type Role } from '../../activities/db/role-mappings.js';
import { groupName, mappingName, roleList } from '../../api/people/role-mapping-inputs.js';
import type { Sql } from '../database/client.js';
import { listOutput } from './table.js';

/** The word that stands for "no role" on the command line, where an empty list cannot be typed. */
const NO_ROLE = 'none';

export interface PeopleRolesOptions {
  env: string;
  json?: boolean;
}

async function environmentIdOf(sql: Sql, env: string): Promise<string> {
  const environment = await findEnvironmentByName(sql, env);
  if (!environment) throw new Error(`no environment "${env}"`);
  return environment.id;
}

/**
 * The group as the API takes it (a `person:` email lower-cased), its refusal in the command
 * line's words.
 */
export function parseGroup(value: string): string {
  const parsed = groupName.safeParse(value);
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `group ${parsed.error.issues.map((issue) => issue.message).join('; ')}.`,
    );
  }
  return mappingName(parsed.data);
}

/**
 * The roles as typed: separate words, comma lists or both (`approver admin`,
 * `approver,admin`); `none` alone for no role. Each role once, as the API takes them.
 */
export function parseRoles(words: readonly string[]): Role[] {
  const named = words
    .flatMap((word) => word.split(','))
    .map((word) => word.trim())
    .filter((word) => word !== '');
  if (named.length === 1 && named[0] === NO_ROLE) return [];
  if (named.length === 0) {
    throw new InvalidArgumentError(`name the roles (${ROLES.join(', ')}), or ${NO_ROLE}.`);
  }
  for (const word of named) {
    if (word === NO_ROLE) {
      throw new InvalidArgumentError(`${NO_ROLE} stands alone: it means no role.`);
    }
    if (!(ROLES as readonly string[]).includes(word)) {
      throw new InvalidArgumentError(
        `role "${word}" must be one of ${ROLES.join(', ')} (or ${NO_ROLE}).`,
      );
    }
  }
  const parsed = roleList.safeParse(named);
  if (!parsed.success) {
    throw new InvalidArgumentError(`roles ${parsed.error.issues[0]?.message ?? 'are not valid'}.`);
  }
  return parsed.data;
}

/** `gatehouse people roles list`: the environment's groups and their roles, as the API lists them. */
export async function listRoleMappingsCommand(
  sql: Sql,
  options: PeopleRolesOptions,
): Promise<string> {
  const mappings = await listRoleMappings(sql, await environmentIdOf(sql, options.env));
  return listOutput(
    mappings,
    [
      ['GROUP', (mapping) => mapping.group],
      ['ROLES', (mapping) => mapping.roles.join(',')],
    ],
    { ...options, empty: `(no groups hold a role in ${options.env})` },
  );
}

/**
 * `gatehouse people roles set`: replaces the group's roles, recorded in the audit log as the
 * API's changes are, by `cli` (as the other commands record their changes).
 */
export async function setRoleMappingCommand(
  sql: Sql,
  group: string,
  roles: readonly Role[],
  options: PeopleRolesOptions,
): Promise<string> {
  const actor: RoleMappingActor = {
    environmentId: await environmentIdOf(sql, options.env),
    agentId: 'cli',
    channel: 'cli',
    traceId: `cli-${uuidv7()}`,
  };
  const kept = await changeGroupRoles(sql, actor, group, roles);
  if (options.json) return JSON.stringify({ group, roles: kept }, null, 2);
  return kept.length === 0
    ? `group "${group}" holds no role in ${options.env} now`
    : `group "${group}" holds ${kept.join(', ')} in ${options.env} now`;
}
