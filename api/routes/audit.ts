import { Router } from 'express';
import { z } from 'zod';
import { decisionView, findApproval } from '../../activities/db/approvals.js';
import {
  findAuditEvent,
  listAuditEvents,
  type AuditEvent,
} from '../../activities/db/audit-events.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { decodeCursor, page, pageQuery } from '../http/id-cursor.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { decisionSchema } from '../approvals/decision-schema.js';

const decisions = ['allowed', 'blocked', 'denied', 'failed'] as const;

export const listAuditQuery = z
  .strictObject({
    user: externalUserId.optional().meta({ description: "A user's external id" }),
    decision: z.enum(decisions).optional(),
    ...pageQuery('cursor'),
  })
  .meta({ id: 'ListAuditQuery' });
const eventParam = z.strictObject({ event_id: uuidString() });

const listItem = z
  .object({
    id: z.string(),
    action: z.string().meta({ description: '`<app>.<action>`, or `<app>.proxy` for proxy calls' }),
    scope: z
      .enum(['read', 'write', 'destructive'])
      .nullable()
      .meta({ description: 'null only for a refused call that named no known action' }),
    decision: z.enum(decisions).meta({
      description:
        '`allowed` (ran), `blocked` (held for approval), `denied` (policy, rejected approval, or refused by the API: insufficient_access, invalid_request, not_found), `failed` (stopped by the service: connection_* or upstream_*)',
    }),
    reason: z.string().nullable(),
    agent_id: z.string(),
    user: z
      .string()
      .nullable()
      .meta({ description: 'null only for a refused call that named no valid user' }),
    via: z.string(),
    time: z.iso.datetime(),
    grant_id: z.string().optional().meta({
      description:
        'Present when a grant let the call run without asking (the policy said `ask`): its id',
    }),
  })
  .meta({ id: 'AuditListItem' });
const fullEvent = listItem
  .extend({
    approval: z
      .object({
        id: z.string(),
        status: z.string(),
        decisions: z.array(decisionSchema).meta({
          description:
            "Who decided it so far, oldest first; a person with their name and their identity provider's issuer and subject",
        }),
      })
      .optional()
      .meta({ description: 'Present when an approval was raised' }),
    request: z.record(z.string(), z.unknown()).meta({
      description: 'What the caller asked: the action, user and input, or the proxy request',
      example: {
        action: 'acme.create_task',
        user: 'u_123',
        via: 'api',
        input: { title: 'Ship the report' },
      },
    }),
    response: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({
        description: 'What the app answered; null when the call did not reach it',
        example: { ok: true, upstream_status: 201, data: { id: 't_42', title: 'Ship the report' } },
      }),
    policy: z.object({ id: z.string(), version: z.int() }).nullable(),
    trace_id: z.string().meta({ description: 'The trace id of the HTTP request (`X-Trace-Id`)' }),
  })
  .meta({ id: 'AuditEvent' });

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/audit',
  operationId: 'list_audit_events',
  summary: 'List audit events, newest first',
  description:
    'One event per call through actions, the proxy or MCP, refused calls included. Filter by `user` and `decision`; pass `cursor` from one page to get the next.',
  request: { query: listAuditQuery },
  response: z.object({ data: z.array(listItem), cursor: z.string().nullable() }),
  errors: [],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/audit/{event_id}',
  operationId: 'get_audit_event',
  summary: 'Get one audit event in full',
  description:
    'With the request, the response (null when the call did not run), the approval when one was raised, the policy version that decided, and the trace id.',
  request: { params: eventParam },
  response: fullEvent,
  errors: [],
  errorExamples: [
    {
      when: 'unknown event',
      error: new NotFoundError('Audit event 0198f2d0-3b7c-7e11-a4c2-9d8e7f6a5b43'),
    },
  ],
});

function presentItem(event: AuditEvent): z.infer<typeof listItem> {
  return {
    id: event.id,
    action: event.action,
    scope: event.scope,
    decision: event.decision,
    reason: event.reason,
    agent_id: event.agentId,
    user: event.userExternalId,
    via: event.via,
    time: event.time.toISOString(),
    // Present only when a grant let the call through, as `approval` is when one was raised.
    ...(event.grantId === null ? {} : { grant_id: event.grantId }),
  };
}

/** The audit log, read-only: every call, the refused ones too. */
export function auditRoutes(deps: ApiDeps): Router {
  const router = Router();

  router.get('/v1/audit', authorize({ operation: 'read' }), async (req, res) => {
    const query = parse(listAuditQuery, req.query, 'query');
    const events = await listAuditEvents(deps.sql, callerOf(res).environmentId, {
      ...(query.user === undefined ? {} : { user: query.user }),
      ...(query.decision === undefined ? {} : { decision: query.decision }),
      ...(query.cursor === undefined ? {} : { before: decodeCursor(query.cursor) }),
      limit: query.limit,
    });
    const { items, cursor } = page(events, query.limit);
    res.json({ data: items.map(presentItem), cursor });
  });

  router.get('/v1/audit/:event_id', authorize({ operation: 'read' }), async (req, res) => {
    const { event_id: id } = parse(eventParam, req.params, 'path');
    const environmentId = callerOf(res).environmentId;
    const event = await findAuditEvent(deps.sql, environmentId, id);
    if (!event) throw new NotFoundError(`Audit event ${id}`);
    const approval = event.approvalId
      ? await findApproval(deps.sql, environmentId, event.approvalId)
      : null;
    res.json({
      ...presentItem(event),
      // Present when an approval was raised, absent otherwise.
      ...(event.approvalId
        ? {
            approval: {
              id: event.approvalId,
              status: approval?.status ?? 'unknown',
              decisions: (approval?.decisions ?? []).map(decisionView),
            },
          }
        : {}),
      request: event.request,
      response: event.response,
      policy:
        event.policyId !== null && event.policyVersion !== null
          ? { id: event.policyId, version: event.policyVersion }
          : null,
      trace_id: event.traceId,
    });
  });
  return router;
}
