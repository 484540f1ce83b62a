import { createHash } from 'node:crypto';
import type { Db } from '../../infra/database/client.js';
import type { AuditEvent } from '../db/audit-events.js';

/**
 * An audit row as its hash sees it: every field as Postgres stores it, request and response as
 * Postgres's own jsonb text rendering (read with `::text`), so nothing is re-rendered here.
 */
export type HashedEventRow = Omit<AuditEvent, 'request' | 'response'> & {
  seq: string;
  requestText: string;
  responseText: string | null;
  hash: Buffer;
};

/**
 * The columns of a HashedEventRow, for a select from audit_events. `seq` is a bigint, which
 * postgres.js reads as its decimal string: uncast, so an `order by seq` sorts the number.
 */
export const hashedEventColumns = (sql: Db) => sql`
  id, environment_id, seq, time, action, scope, decision, reason, agent_id, via,
  user_external_id, connected_user_id, connection_id, approval_id, request::text as request_text,
  response::text as response_text, trace_id, policy_id, policy_version, grant_id, hash`;

/**
 * The canonical form, identical to SQL's audit_event_canonical (migration 022): a JSON array, no
 * spaces, of a version tag and the fields as strings or null, times in ISO UTC to the ms.
 * JSON.stringify escapes a string exactly as Postgres's to_json does for any text Postgres can
 * hold (no NUL; every surrogate paired), which test/audit/canonical-event.test.ts checks.
 */
export function canonicalEvent(row: Omit<HashedEventRow, 'hash' | 'seq'>): string {
  return JSON.stringify([
    'gatehouse.audit.v1',
    row.id,
    row.environmentId,
    row.time.toISOString(),
    row.action,
    row.scope,
    row.decision,
    row.reason,
    row.agentId,
    row.via,
    row.userExternalId,
    row.connectedUserId,
    row.connectionId,
    row.approvalId,
    row.requestText,
    row.responseText,
    row.traceId,
    row.policyId,
    row.policyVersion === null ? null : String(row.policyVersion),
    row.grantId,
  ]);
}

export function eventHash(row: Omit<HashedEventRow, 'hash' | 'seq'>): Buffer {
  return createHash('sha256').update(canonicalEvent(row), 'utf8').digest();
}
