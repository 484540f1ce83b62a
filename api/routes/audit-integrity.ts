import { Router } from 'express';
import { z } from 'zod';
import {
  listCheckpoints,
  positionAfter,
  type AuditCheckpoint,
} from '../../activities/db/audit-checkpoints.js';
import {
  exportFilter,
  EXPORT_SETTLE_WAIT_MS,
  exportHorizon,
  writeAuditExport,
} from '../../activities/audit/export-ndjson.js';
import type { ApiDeps } from '../deps.js';
import { ServiceUnavailableError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import {
  checkpointCursor,
  checkpointPosition,
  encodeCheckpointCursor,
  seqCursor,
} from '../http/seq-cursor.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';

export const exportQuery = z
  .strictObject({
    user: externalUserId.optional().meta({ description: "A user's external id" }),
    decision: z.enum(['allowed', 'blocked', 'denied', 'failed']).optional(),
    since: z.iso.datetime().optional().meta({ description: 'Events at or after this time' }),
    until: z.iso.datetime().optional().meta({ description: 'Events before this time' }),
    cursor: seqCursor()
      .optional()
      .meta({ description: 'The `cursor` of the last line received: resume after it' }),
  })
  .meta({ id: 'ExportAuditQuery' });

const checkpointsQuery = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: checkpointCursor()
      .optional()
      .meta({ description: 'The `cursor` of the previous page' }),
  })
  .meta({ id: 'ListAuditCheckpointsQuery' });

const checkpoint = z
  .object({
    id: z.string(),
    after_seq: z
      .string()
      .meta({ description: 'Seals the events with after_seq < seq <= last_seq' }),
    last_seq: z.string(),
    event_count: z.int(),
    merkle_root: z.string().meta({ description: 'sha256, hex (README "Audit integrity")' }),
    previous_hash: z.string().nullable(),
    hash: z.string(),
    key_id: z.string(),
    signature: z.string().meta({ description: 'Ed25519 over the canonical form, base64' }),
    sealed_at: z.iso.datetime(),
    superseded_by: z.string().nullable().meta({
      description:
        "null on the chain. Otherwise the id of the signed repair (`gatehouse audit repair`) that took this checkpoint off the chain: it is kept, and its events are sealed by the chain's checkpoints; skip it when following previous_hash",
    }),
    superseded_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'AuditCheckpoint' });

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/audit/checkpoints',
  operationId: 'list_audit_checkpoints',
  summary: 'List audit checkpoints, oldest first',
  description:
    "Each seals the events since the previous one: Merkle root, chain link, Ed25519 signature and key id. `gatehouse audit verify` recomputes them. Checkpoints a repair took off the chain are listed too, each before the chain's checkpoint with its last_seq, with `superseded_by` set.",
  request: { query: checkpointsQuery },
  response: z.object({ data: z.array(checkpoint), cursor: z.string().nullable() }),
  errors: [],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/audit/export',
  operationId: 'export_audit_events',
  summary: 'Export audit events as NDJSON, oldest first',
  description:
    'application/x-ndjson, one event a line in full, with its hash, checkpoint_id (null until sealed) and cursor; pass the last line\'s cursor to resume. The export ends at the trail as it was when it started. Line format: README "Export the audit trail".',
  request: { query: exportQuery },
  response: z.string(),
  // A transaction open when the export started stayed open 5 s: retry (README).
  errors: ['service_unavailable'],
});

function presentCheckpoint(row: AuditCheckpoint): z.infer<typeof checkpoint> {
  return {
    id: row.id,
    after_seq: row.afterSeq,
    last_seq: row.lastSeq,
    event_count: row.eventCount,
    merkle_root: row.merkleRoot.toString('hex'),
    previous_hash: row.previousHash?.toString('hex') ?? null,
    hash: row.hash.toString('hex'),
    key_id: row.keyId,
    signature: row.signature.toString('base64'),
    sealed_at: row.sealedAt.toISOString(),
    superseded_by: row.supersededBy,
    superseded_at: row.supersededAt?.toISOString() ?? null,
  };
}

/** The audit trail's checkpoints and its export. Mounted before `/v1/audit/:event_id`. */
export function auditIntegrityRoutes(deps: ApiDeps): Router {
  const router = Router();

  router.get('/v1/audit/checkpoints', authorize({ operation: 'read' }), async (req, res) => {
    const query = parse(checkpointsQuery, req.query, 'query');
    const after = query.cursor === undefined ? null : checkpointPosition(query.cursor);
    const rows = await listCheckpoints(deps.sql, callerOf(res).environmentId, {
      ...(after === null ? {} : { after }),
      limit: query.limit,
    });
    const items = rows.slice(0, query.limit);
    const last = items.at(-1);
    res.json({
      data: items.map(presentCheckpoint),
      cursor:
        rows.length > query.limit && last ? encodeCheckpointCursor(positionAfter(last)) : null,
    });
  });

  router.get('/v1/audit/export', authorize({ operation: 'read' }), async (req, res) => {
    const query = parse(exportQuery, req.query, 'query');
    const { environmentId } = callerOf(res);
    const horizon = await exportHorizon(
      deps.sql,
      environmentId,
      EXPORT_SETTLE_WAIT_MS,
      query.cursor ?? null,
    );
    if (horizon === null) {
      throw new ServiceUnavailableError(
        'A database transaction open when the export started has not ended, and it may hold audit events: retry shortly.',
      );
    }
    res.status(200).type('application/x-ndjson');
    res.flushHeaders();
    const written = await writeAuditExport(
      deps.sql,
      environmentId,
      exportFilter(query),
      horizon.upToSeq,
      res,
    );
    if (!written.complete) return; // the client went away
    res.end();
  });
  return router;
}
