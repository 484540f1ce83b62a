import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../infra/database/client.js';

export interface Environment {
  id: string;
  name: string;
  createdAt: Date;
}

export const ENVIRONMENT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

export class EnvironmentExistsError extends Error {
  constructor(readonly environmentName: string) {
    super(`environment "${environmentName}" already exists`);
  }
}

export async function createEnvironment(sql: Db, name: string): Promise<Environment> {
  const [row] = await sql<Environment[]>`
    insert into environments (id, name) values (${uuidv7()}, ${name})
    on conflict (name) do nothing
    returning id, name, created_at`;
  if (!row) throw new EnvironmentExistsError(name);
  return row;
}

/** Returns the environment, creating it when missing (used by `gatehouse dev` and seeding). */
export async function ensureEnvironment(sql: Db, name: string): Promise<Environment> {
  await sql`insert into environments (id, name) values (${uuidv7()}, ${name}) on conflict (name) do nothing`;
  const found = await findEnvironmentByName(sql, name);
  if (!found) throw new Error(`environment "${name}" vanished while being created`);
  return found;
}

export async function findEnvironmentByName(sql: Db, name: string): Promise<Environment | null> {
  const [row]: [Environment?] = await sql`
    select id, name, created_at from environments where name = ${name}`;
  return row ?? null;
}

export async function findEnvironmentById(sql: Db, id: string): Promise<Environment | null> {
  const [row]: [Environment?] = await sql`
    select id, name, created_at from environments where id = ${id}`;
  return row ?? null;
}

export async function listEnvironments(sql: Db): Promise<Environment[]> {
  return sql<Environment[]>`select id, name, created_at from environments order by name`;
}
