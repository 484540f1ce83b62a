import {
  EXPORT_SETTLE_WAIT_MS,
  exportHorizon,
  exportRecord,
  type ExportRecord,
} from '../audit/export-ndjson.js';
import { exportAuditBatch } from '../db/audit-export.js';
import { advanceAuditDelivery, findWebhookEndpointForDelivery } from '../db/webhook-endpoints.js';
import { deliverSigned, type WebhookDeps, type WebhookPayload } from './signed-delivery.js';

/** Events per `audit.event` delivery at most. */
export const AUDIT_WEBHOOK_BATCH = 100;

export type AuditEventPayload = WebhookPayload<'audit.event', { events: ExportRecord[] }>;

/**
 * `off`: no endpoint, or it does not take audit events (the delivery workflow ends); `caught_up`:
 * nothing newer to send; `more`: a full batch went out, the next may be waiting.
 */
export type AuditDeliveryOutcome = 'off' | 'caught_up' | 'more';

class AuditEventsNotSettled extends Error {
  constructor() {
    super('a database transaction that may hold audit events is still open; retried');
    this.name = 'AuditEventsNotSettled';
  }
}

/**
 * Delivers the environment's next batch of audit events: the events after the last
 * one its receiver acknowledged, oldest first, up to the export's horizon (so none is skipped,
 * as an export skips none), each in the export's line format, in one signed POST. The endpoint
 * and its position are read at each attempt; a failure throws for Temporal to retry, and only
 * an acknowledged batch moves the position. A retry may carry more events than the attempt
 * before it (new ones arrived), so its `webhook-id` names its range: receivers de-duplicate by
 * each event's `event_id`.
 */
export function deliverAuditEventsActivity({ sql, config, logger }: WebhookDeps) {
  return async function deliverAuditEvents(environmentId: string): Promise<AuditDeliveryOutcome> {
    const endpoint = await findWebhookEndpointForDelivery(sql, config.encryption, environmentId);
    const from = endpoint?.auditEvents ? endpoint.auditDeliveredSeq : null;
    if (!endpoint || from === null) return 'off';
    const horizon = await exportHorizon(sql, environmentId, EXPORT_SETTLE_WAIT_MS, from);
    if (horizon === null) throw new AuditEventsNotSettled();
    if (horizon.upToSeq === null) return 'caught_up';
    const rows = await exportAuditBatch(
      sql,
      environmentId,
      {},
      { afterSeq: from, upToSeq: horizon.upToSeq },
      AUDIT_WEBHOOK_BATCH,
    );
    const first = rows[0];
    const last = rows.at(-1);
    if (!first || !last) return 'caught_up';
    const payload: AuditEventPayload = {
      type: 'audit.event',
      timestamp: new Date().toISOString(),
      data: { events: rows.map(exportRecord) },
    };
    await deliverSigned(
      { config, logger },
      endpoint,
      { type: payload.type, eventId: `evt_audit_${first.seq}_${last.seq}`, environmentId },
      payload,
    );
    await advanceAuditDelivery(sql, environmentId, from, last.seq);
    return rows.length < AUDIT_WEBHOOK_BATCH ? 'caught_up' : 'more';
  };
}
