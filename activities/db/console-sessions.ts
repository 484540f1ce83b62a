import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';
import type { Role } from './role-mappings.js';

/**
 * Console sessions, server-side: the browser holds a random token, Postgres its SHA-256 and
 * everything the session stands for, so a session ends for good the moment it is ended here
 * (sign-out, expiry), whatever the browser still holds.
 */
export interface ConsoleSession {
  id: string;
  environmentId: string;
  environmentName: string;
  personId: string;
  issuer: string;
  subject: string;
  email: string;
  name: string;
  groups: string[];
  roles: Role[];
  csrfSecret: Buffer;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

export const hashSessionToken = (token: string): Buffer =>
  createHash('sha256').update(token, 'utf8').digest();

export interface NewConsoleSession {
  token: string;
  environmentId: string;
  personId: string;
  groups: string[];
  roles: Role[];
  csrfSecret: Buffer;
  absoluteSeconds: number;
}

export async function createConsoleSession(sql: Db, input: NewConsoleSession): Promise<string> {
  const id = uuidv7();
  await sql`
    insert into console_sessions (token_hash, id, environment_id, person_id, groups, roles,
      csrf_secret, expires_at)
    values (${hashSessionToken(input.token)}, ${id}, ${input.environmentId}, ${input.personId},
      ${input.groups}, ${input.roles}, ${input.csrfSecret},
      now() + make_interval(secs => ${input.absoluteSeconds}))`;
  return id;
}

/**
 * The live session this token opens: not ended, not past its absolute end, not idle for longer
 * than `idleSeconds`. Its last use moves on at most once a minute, so reading a page does not
 * write on every request.
 */
export async function findLiveSession(
  sql: Db,
  token: string,
  idleSeconds: number,
): Promise<ConsoleSession | null> {
  const [row]: [ConsoleSession?] = await sql`
    with live as (
      select s.token_hash from console_sessions s
      where s.token_hash = ${hashSessionToken(token)} and s.ended_at is null
        and s.expires_at > now()
        and s.last_seen_at > now() - make_interval(secs => ${idleSeconds})
    ), touched as (
      update console_sessions s set last_seen_at = now()
      from live where s.token_hash = live.token_hash
        and s.last_seen_at < now() - interval '1 minute'
    )
    select s.id, s.environment_id, e.name as environment_name, s.person_id, p.issuer, p.subject,
      p.email, p.name, s.groups, s.roles, s.csrf_secret, s.created_at, s.last_seen_at,
      s.expires_at
    from live join console_sessions s on s.token_hash = live.token_hash
      join people p on p.id = s.person_id
      join environments e on e.id = s.environment_id`;
  return row ?? null;
}

/** Sign-out: the token opens nothing from now on. */
export async function endConsoleSession(sql: Db, id: string): Promise<void> {
  await sql`update console_sessions set ended_at = now() where id = ${id} and ended_at is null`;
}

/**
 * Sessions past their absolute end by a day, dropped (a session signed out ends at its absolute
 * end too, as far as this is concerned): the day keeps them for whoever investigates a sign-in.
 */
export async function deleteOldSessions(sql: Db): Promise<number> {
  const rows = await sql`
    delete from console_sessions where expires_at < now() - interval '1 day'`;
  return rows.count;
}
