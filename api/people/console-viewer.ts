import { findLiveSession, type ConsoleSession } from '../../activities/db/console-sessions.js';
import { rolesOfGroups, type Role } from '../../activities/db/role-mappings.js';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Request } from 'express';
import { roleGroupsOf } from './role-groups.js';
import { readCookie, sessionCookieName } from './session-cookie.js';

/** A signed-in person looking at one environment's console, with the roles they hold there now. */
export interface ConsoleViewer {
  session: ConsoleSession;
  roles: Role[];
}

/**
 * The person behind this request in this environment, or null. Only the session cookie counts:
 * an API key (Authorization, X-API-Key) means nothing here, as a session means nothing to /v1.
 * A session opens only the environment it was signed in to, whatever cookie name carried it.
 * Roles are read from the role mappings at each request, so a group's role taken away applies to
 * sessions already open, not only from the next sign-in.
 */
export async function consoleViewer(
  sql: Sql,
  config: Pick<Config, 'api' | 'people'>,
  req: Request,
  environment: { id: string; name: string },
): Promise<ConsoleViewer | null> {
  const token = readCookie(req, sessionCookieName(config, environment.name));
  if (token === undefined || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const session = await findLiveSession(sql, token, config.people.session.idleSeconds);
  if (!session || session.environmentId !== environment.id) return null;
  const roles = await rolesOfGroups(sql, environment.id, roleGroupsOf(session));
  return { session, roles };
}

/**
 * What each role may do in the console. Deciding is the approver's alone, so that whoever
 * governs agents (operators, admins) does not also approve their calls unless a group is given
 * both roles on purpose.
 */
export const ROLE_ALLOWS = {
  decide: ['approver'],
  govern: ['operator', 'admin'],
  administer: ['admin'],
  read: ['approver', 'operator', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

export function viewerMay(viewer: ConsoleViewer, what: keyof typeof ROLE_ALLOWS): boolean {
  const allowed: readonly Role[] = ROLE_ALLOWS[what];
  return viewer.roles.some((role) => allowed.includes(role));
}
