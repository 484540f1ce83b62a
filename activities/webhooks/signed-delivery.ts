import http from 'node:http';
import https from 'node:https';
import { Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../../infra/config.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import type { WebhookEndpoint } from '../db/webhook-endpoints.js';
import { assertPublicLiteral, guardedLookup } from './endpoint-address.js';

export interface WebhookDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

export type DeliveryOutcome = 'delivered' | 'no_endpoint' | 'no_approval';

/** What every event shares: the envelope receivers dispatch on. */
export interface WebhookPayload<T extends string, D> {
  type: T;
  timestamp: string;
  data: D;
}

export interface WebhookMessage {
  type: string;
  /** The `webhook-id` of every attempt, so receivers can de-duplicate. */
  eventId: string;
  /** For the log lines only. */
  approvalId?: string;
  environmentId?: string;
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
  // Also bounds the drained answer: it ends with the request.
  const deadline = deadlineSignal(WEBHOOK_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: deadline.signal,
        ...(allowPrivate ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        response.resume();
        response.on('error', () => undefined);
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.on('close', () => {
      deadline.clear();
    });
    request.end(body);
  });
}

/**
 * Signs an event the Standard Webhooks way and POSTs it, once: any failure throws for Temporal
 * to retry the activity. Errors and log lines name the receiver's origin and the status, never
 * the secret, the signature or the body (which may carry decision links).
 */
export async function deliverSigned(
  deps: Pick<WebhookDeps, 'config' | 'logger'>,
  endpoint: WebhookEndpoint,
  message: WebhookMessage,
  payload: WebhookPayload<string, unknown>,
): Promise<'delivered'> {
  const body = JSON.stringify(payload);
  const now = new Date();
  const url = new URL(endpoint.url);
  const log = deps.logger.child({
    webhook: message.type,
    eventId: message.eventId,
    approvalId: message.approvalId,
    environmentId: message.environmentId,
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
        'webhook-id': message.eventId,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(endpoint.secret).sign(message.eventId, now, body),
      },
      deps.config.webhooks.allowPrivate,
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
}
