import http from 'node:http';
import https from 'node:https';
import { Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import type { ApprovalDecidedEvent } from '../../workflows/webhook.js';
import { approvalView, findApprovalById } from '../db/approvals.js';
import { findWebhookEndpointForDelivery } from '../db/webhook-endpoints.js';
import { assertPublicLiteral, guardedLookup } from './endpoint-address.js';

export interface WebhookDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

export type DeliveryOutcome = 'delivered' | 'no_endpoint' | 'no_approval';

export interface ApprovalDecidedPayload {
  type: 'approval.decided';
  timestamp: string;
  data: { approval: ApprovalView };
}

class DeliveryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryFailed';
  }
}

/**
 * One POST, without following redirects (a redirect could lead to a refused address). The
 * answer's body is drained but not read: only the status matters.
 */
function post(
  url: URL,
  body: string,
  headers: Record<string, string>,
  allowPrivate: boolean,
): Promise<number> {
  if (!allowPrivate) assertPublicLiteral(url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
        ...(allowPrivate ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        response.resume();
        response.on('error', () => undefined);
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Delivers `approval.decided` (DESIGN.md §4) signed the Standard Webhooks way. The approval and
 * the endpoint are read at each attempt, so an endpoint fixed or removed during the retries is
 * honoured; the event id is the `webhook-id` of every attempt, for receivers to de-duplicate.
 * Any failure throws and Temporal retries; the error names the status, never the secret.
 */
export function webhookActivities(deps: WebhookDeps) {
  const { sql, config, logger } = deps;
  return {
    async deliverApprovalDecided(event: ApprovalDecidedEvent): Promise<DeliveryOutcome> {
      const approval = await findApprovalById(sql, event.approvalId);
      if (!approval || approval.environmentId !== event.environmentId) return 'no_approval';
      const endpoint = await findWebhookEndpointForDelivery(
        sql,
        config.encryption,
        event.environmentId,
      );
      if (!endpoint) return 'no_endpoint';

      const payload: ApprovalDecidedPayload = {
        type: 'approval.decided',
        timestamp: (approval.decidedAt ?? new Date()).toISOString(),
        data: { approval: approvalView(approval) },
      };
      const body = JSON.stringify(payload);
      const now = new Date();
      const url = new URL(endpoint.url);
      const log = logger.child({
        webhook: 'approval.decided',
        eventId: event.eventId,
        approvalId: event.approvalId,
        // The origin only: a receiver URL may carry a token in its path or query.
        receiver: url.origin,
        attempt: Context.current().info.attempt,
      });

      let status: number;
      try {
        status = await post(
          url,
          body,
          {
            'content-type': 'application/json',
            'user-agent': 'Gatehouse-Webhooks/1',
            'webhook-id': event.eventId,
            'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
            'webhook-signature': new Webhook(endpoint.secret).sign(event.eventId, now, body),
          },
          config.webhooks.allowPrivate,
        );
      } catch (error) {
        const reason =
          error instanceof Error && error.name === 'TimeoutError'
            ? `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`
            : error instanceof Error
              ? error.message
              : String(error);
        log.warn({ reason }, 'webhook delivery failed; Temporal retries it');
        throw new DeliveryFailed(`webhook delivery to ${url.origin} failed: ${reason}`);
      }
      if (status < 200 || status > 299) {
        log.warn({ status }, 'webhook receiver refused the delivery; Temporal retries it');
        throw new DeliveryFailed(`webhook receiver ${url.origin} answered ${status}`);
      }
      log.info({ status }, 'webhook delivered');
      return 'delivered';
    },
  };
}
