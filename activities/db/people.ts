import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';

/**
 * A person who signs in: known by the issuer and subject of their ID token, shown by name and
 * email. Name, email and groups are the provider's, refreshed at every sign-in.
 */
export interface Person {
  id: string;
  issuer: string;
  subject: string;
  email: string;
  name: string;
  groups: string[];
  createdAt: Date;
  lastSignInAt: Date;
}

export type SignedInClaims = Pick<Person, 'issuer' | 'subject' | 'email' | 'name' | 'groups'>;

const columns = (sql: Db) =>
  sql`id, issuer, subject, email, name, groups, created_at, last_sign_in_at`;

/** Records a sign-in: the person as the provider describes them now. */
export async function upsertPerson(sql: Db, claims: SignedInClaims): Promise<Person> {
  const [row] = await sql<Person[]>`
    insert into people (id, issuer, subject, email, name, groups)
    values (${uuidv7()}, ${claims.issuer}, ${claims.subject}, ${claims.email}, ${claims.name},
      ${claims.groups})
    on conflict (issuer, subject) do update set email = excluded.email, name = excluded.name,
      groups = excluded.groups, last_sign_in_at = now()
    returning ${columns(sql)}`;
  return row as Person;
}

export async function findPerson(sql: Db, id: string): Promise<Person | null> {
  const [row]: [Person?] = await sql`select ${columns(sql)} from people where id = ${id}`;
  return row ?? null;
}

/**
 * The people whose groups at their last sign-in include any of `groups`, one per email
 * (lower-cased; the latest sign-in's groups when one email signed in through two issuers). Only
 * people who signed in are known: a group's other members are not.
 */
export async function peopleInGroups(
  sql: Db,
  groups: readonly string[],
): Promise<{ email: string; groups: string[] }[]> {
  if (groups.length === 0) return [];
  return sql<{ email: string; groups: string[] }[]>`
    select email, groups from (
      select distinct on (lower(email)) lower(email) as email, groups from people
      order by lower(email), last_sign_in_at desc
    ) latest
    where groups && ${[...groups]}::text[]
    order by email`;
}

/**
 * The person Gatehouse knows by this e-mail (any case), as of their latest sign-in; null when
 * nobody with it ever signed in.
 */
export async function findPersonByEmail(sql: Db, email: string): Promise<Person | null> {
  const [row]: [Person?] = await sql`
    select ${columns(sql)} from people where lower(email) = ${email.toLowerCase()}
    order by last_sign_in_at desc limit 1`;
  return row ?? null;
}
