import type { Caller } from '../db/api-keys.js';
import type { Db } from '../../infra/database/client.js';

/**
 * The key a Nexus operation was started with, as it stands now: an operation outlives its start
 * (a held call waits up to a day), and a REST caller's retry presents its key again, so each
 * request of the operation finds the key anew. Null once it is revoked: the operation then
 * fails as a REST retry with a revoked key would. Only the key's id travels in Temporal; its
 * secret never does.
 */
export async function liveCallerByKeyId(sql: Db, keyId: string): Promise<Caller | null> {
  const [row]: [Caller?] = await sql`
    select k.id as key_id, k.name as key_name, k.environment_id, e.name as environment_name,
           k.access, k.scopes, k.agent_id, k.audience
    from api_keys k join environments e on e.id = k.environment_id
    where k.id = ${keyId} and k.revoked_at is null`;
  return row ?? null;
}
