import { Router } from 'express';
import { z } from 'zod';
import {
  deleteWebhookEndpoint,
  findWebhookEndpointView,
  setWebhookEndpoint,
  type WebhookEndpointView,
} from '../../activities/db/webhook-endpoints.js';
import { endpointAddressProblem } from '../../activities/webhooks/endpoint-address.js';
import { webhookEndpointInput } from '../../activities/webhooks/endpoint-input.js';
import { ensureAuditEventDelivery } from '../../activities/webhooks/start-audit-delivery.js';
import type { ApiDeps } from '../deps.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation, type ErrorExample } from '../openapi/registry.js';

export const setWebhookEndpointBody = webhookEndpointInput.meta({
  id: 'SetWebhookEndpoint',
  description: 'The `secret` (Standard Webhooks `whsec_…`) is write-only.',
});

const webhookEndpointOutput = z
  .object({
    url: z.string(),
    secret_hint: z.string().meta({ description: 'The last four characters of the secret.' }),
    updated_at: z.iso.datetime(),
    updated_by: z.string().meta({ description: 'agent id of the key that last set it' }),
    audit_events: z.boolean(),
    audit_cursor: z.string().nullable().meta({
      description:
        'The export `cursor` of the last audit event the receiver acknowledged; null while audit delivery is off.',
    }),
  })
  .meta({ id: 'WebhookEndpoint' });

const noEndpoint: ErrorExample = {
  when: 'none set',
  error: new NotFoundError('Webhook endpoint'),
};

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/webhook-endpoint',
  operationId: 'get_webhook_endpoint',
  summary: 'Get the webhook endpoint of the environment',
  description:
    'Where `approval.requested` and `approval.decided` (and `audit.event`, when on) are delivered; the signing secret shows only as its last four characters.',
  response: webhookEndpointOutput,
  errors: [],
  errorExamples: [noEndpoint],
});
registerConnectedUserOperation({
  method: 'put',
  path: '/v1/webhook-endpoint',
  operationId: 'set_webhook_endpoint',
  summary: 'Set the webhook endpoint and its signing secret',
  description:
    'Replaces the URL and the Standard Webhooks signing secret (`whsec_…`, write-only). Full-access keys only: it decides where data about your calls is sent.',
  request: {
    body: { content: { 'application/json': { schema: setWebhookEndpointBody } }, required: true },
  },
  response: webhookEndpointOutput,
  errors: [],
  requires: { operation: 'write', fullAccess: true },
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/webhook-endpoint',
  operationId: 'delete_webhook_endpoint',
  summary: 'Stop delivering webhooks for the environment',
  description: 'Full-access keys only.',
  response: z.object({ ok: z.literal(true) }),
  errors: [],
  requires: { operation: 'write', fullAccess: true },
  errorExamples: [noEndpoint],
});

function presentWebhookEndpoint(endpoint: WebhookEndpointView) {
  return {
    url: endpoint.url,
    secret_hint: `…${endpoint.secretHint}`,
    updated_at: endpoint.updatedAt.toISOString(),
    updated_by: endpoint.updatedBy,
    audit_events: endpoint.auditEvents,
    audit_cursor: endpoint.auditDeliveredSeq,
  };
}

/**
 * The environment's `approval.decided` endpoint. Changing it needs a full key: whoever sets it
 * receives every decision of the environment.
 */
export function webhookEndpointRoutes(deps: ApiDeps): Router {
  const router = Router();
  const keyring = deps.config.encryption;

  router.get('/v1/webhook-endpoint', authorize({ operation: 'read' }), async (_req, res) => {
    const endpoint = await findWebhookEndpointView(deps.sql, keyring, callerOf(res).environmentId);
    if (!endpoint) throw new NotFoundError('Webhook endpoint');
    res.json(presentWebhookEndpoint(endpoint));
  });

  router.put(
    '/v1/webhook-endpoint',
    authorize({ operation: 'write', fullAccess: true }),
    async (req, res) => {
      const caller = callerOf(res);
      const body = parse(setWebhookEndpointBody, req.body, 'body');
      const problem = await endpointAddressProblem(body.url, deps.config.webhooks.allowPrivate);
      if (problem) {
        throw new InvalidRequestError(`Invalid request body (url: ${problem}).`, [
          { path: 'url', message: problem },
        ]);
      }
      const endpoint = await setWebhookEndpoint(
        deps.sql,
        keyring,
        caller.environmentId,
        { url: body.url, secret: body.secret, auditEvents: body.audit_events },
        // This key chooses where decision links go: they never decide its agent's own calls.
        { agentId: caller.agentId },
      );
      if (endpoint.auditEvents) {
        // Stored first: a PUT that Temporal could not take (503) is simply sent again.
        await deps.temporal.withDeadline(Date.now() + deps.config.requests.deadlineMs, () =>
          ensureAuditEventDelivery(deps.temporal, deps.config.temporal.taskQueue, {
            environmentId: caller.environmentId,
            pollSeconds: deps.config.audit.webhookPollSeconds,
          }),
        );
      }
      res.json(presentWebhookEndpoint(endpoint));
    },
  );

  router.delete(
    '/v1/webhook-endpoint',
    authorize({ operation: 'write', fullAccess: true }),
    async (_req, res) => {
      if (!(await deleteWebhookEndpoint(deps.sql, callerOf(res).environmentId))) {
        throw new NotFoundError('Webhook endpoint');
      }
      res.json({ ok: true });
    },
  );
  return router;
}
