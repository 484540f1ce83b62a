import type { Sql } from '../../infra/database/client.js';
import { deleteConnectedUser } from '../db/connected-users.js';
import { markConnectionRevoked } from '../db/connections.js';

/** The Postgres halves of revoking a connection and deleting a user, as activities. */
export function connectionRecordActivities(sql: Sql) {
  return {
    async markRevoked(connectionId: string): Promise<{ id: string; status: string }> {
      const connection = await markConnectionRevoked(sql, connectionId);
      return { id: connectionId, status: connection?.status ?? 'revoked' };
    },
    async deleteUserRecords(userId: string): Promise<void> {
      await deleteConnectedUser(sql, userId);
    },
  };
}
