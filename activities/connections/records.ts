import type { Sql } from '../../infra/database/client.js';
import { pendingApprovalsOfUser } from '../db/approvals.js';
import { deleteConnectedUser } from '../db/connected-users.js';
import { markConnectionRevoked } from '../db/connections.js';

/** The Postgres halves of revoking a connection and deleting a user, as activities. */
export function connectionRecordActivities(sql: Sql) {
  return {
    async markRevoked(connectionId: string): Promise<{ id: string; status: string }> {
      const connection = await markConnectionRevoked(sql, connectionId);
      return { id: connectionId, status: connection?.status ?? 'revoked' };
    },
    /** The call workflows holding this user's pending approvals. */
    async pendingApprovalWorkflows(userId: string): Promise<string[]> {
      const [user]: [{ environmentId: string; externalId: string }?] = await sql`
        select environment_id, external_id from connected_users where id = ${userId}`;
      if (!user) return [];
      const pending = await pendingApprovalsOfUser(sql, user.environmentId, user.externalId);
      return pending.map((approval) => approval.workflowId);
    },
    async deleteUserRecords(userId: string): Promise<void> {
      await deleteConnectedUser(sql, userId);
    },
  };
}
