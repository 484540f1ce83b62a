import type { Db } from '../../infra/database/client.js';
import type { McpApp } from '../db/mcp-apps.js';

/**
 * The connection whose token lists an OAuth-protected server's tools at a refresh: an active one
 * of the app in its environment, the most recently used first (most likely still authorized).
 * Null when no user has one.
 */
export async function listingConnection(
  sql: Db,
  app: Pick<McpApp, 'environmentId' | 'id'>,
): Promise<string | null> {
  const [row]: [{ id: string }?] = await sql`
    select id from connections
    where environment_id = ${app.environmentId} and app = ${app.id} and status = 'active'
    order by last_used_at desc nulls last, created_at desc
    limit 1`;
  return row?.id ?? null;
}
