import http from 'node:http';
import https from 'node:https';
import { ApplicationFailure } from '@temporalio/common';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { assertPublicLiteral, guardedLookup } from '../webhooks/endpoint-address.js';
import type { TeamsWebhookMessage } from './teams-card.js';

/**
 * Posting an approval card through a Teams workflow webhook: one POST per attempt, without
 * following redirects, through the same address guard as webhook deliveries (the URL was checked
 * when it was set; its name may resolve elsewhere now). A workflow's trigger answers 202 once it
 * took the message; 429 and 5xx are worth another attempt (429 after its Retry-After), any other
 * answer is the webhook's settings and is not.
 */

export const TEAMS_TIMEOUT_MS = 10_000;

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

function post(url: URL, body: string, allowPrivate: boolean): Promise<Answer> {
  if (!allowPrivate) assertPublicLiteral(url);
  const transport = url.protocol === 'https:' ? https : http;
  const deadline = deadlineSignal(TEAMS_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Gatehouse-Notifications/1',
        },
        signal: deadline.signal,
        ...(allowPrivate ? {} : { lookup: guardedLookup }),
      },
      (response) => {
        response.resume();
        response.on('error', () => undefined);
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, retryAfter });
      },
    );
    request.on('error', reject);
    request.on('close', () => {
      deadline.clear();
    });
    request.end(body);
  });
}

/** Retry-After in seconds (or an HTTP date), bounded to an hour; 5 s when absent or unreadable. */
function retryDelaySeconds(header: string | undefined, now: number): number {
  if (header === undefined) return 5;
  const seconds = /^\d+$/.test(header.trim())
    ? Number(header.trim())
    : Math.ceil((Date.parse(header) - now) / 1000);
  return Number.isFinite(seconds) ? Math.max(1, Math.min(seconds, 3600)) : 5;
}

export async function postTeamsCard(
  webhookUrl: string,
  message: TeamsWebhookMessage,
  allowPrivate: boolean,
): Promise<void> {
  const url = new URL(webhookUrl);
  // The host only: the URL's query carries the signature that lets anyone post.
  const at = url.host;
  let answer: Answer;
  try {
    answer = await post(url, JSON.stringify(message), allowPrivate);
  } catch (error) {
    const reason = error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
    throw ApplicationFailure.retryable(
      `The Teams webhook at ${at} could not be reached: ${reason}`,
      'TeamsUnavailable',
    );
  }
  const { status } = answer;
  if (status >= 200 && status < 300) return;
  if (status === 429) {
    const seconds = retryDelaySeconds(answer.retryAfter, Date.now());
    throw ApplicationFailure.create({
      message: `The Teams webhook at ${at} rate-limited the post: retrying after ${String(seconds)} s`,
      type: 'TeamsRateLimited',
      nextRetryDelay: `${String(seconds)} seconds`,
    });
  }
  if (status >= 500 || status === 408) {
    throw ApplicationFailure.retryable(
      `The Teams webhook at ${at} answered HTTP ${String(status)}`,
      'TeamsUnavailable',
    );
  }
  throw ApplicationFailure.nonRetryable(
    `The Teams webhook at ${at} refused the post with HTTP ${String(status)}`,
    'TeamsRefused',
  );
}
