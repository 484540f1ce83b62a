import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, WebClient, type WebAPICallError } from '@slack/web-api';
import type { SlackApp } from '../db/notification-channels.js';
import type { SlackMessage } from './slack-message.js';

/**
 * Posting and updating approval messages through Slack's Web API with the official client, one
 * attempt per activity attempt: the client's own retries are off (Temporal retries the activity,
 * with its backoff and the approval's expiry as the bound), and a rate limit is handed to Temporal
 * with Slack's Retry-After as the next retry's delay.
 */

/** The metadata event type of Gatehouse's approval messages (Slack's message metadata). */
export const SLACK_NOTICE_EVENT = 'gatehouse_approval_notice';

/** Slack's answers that no retry can change: the app's settings or the destination are wrong. */
const LASTING_ERRORS = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'not_allowed_token_type',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'users_not_found',
  'user_not_found',
  'user_disabled',
  'cannot_dm_bot',
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_metadata_format',
  'msg_too_long',
  'no_text',
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
  'invalid_arguments',
]);

export function slackClient(app: Pick<SlackApp, 'botToken' | 'apiBaseUrl'>): WebClient {
  return new WebClient(app.botToken, {
    slackApiUrl: app.apiBaseUrl,
    timeout: 10_000,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
}

/** The client's error as an ApplicationFailure saying whether a retry can help. */
export function slackFailure(error: unknown, doing: string): ApplicationFailure {
  const failure = error as Partial<WebAPICallError> & {
    retryAfter?: number;
    data?: { error?: string };
    statusCode?: number;
  };
  if (failure.code === ErrorCode.RateLimitedError) {
    const seconds = Math.max(1, Math.min(failure.retryAfter ?? 1, 3600));
    return ApplicationFailure.create({
      message: `Slack rate-limited ${doing}: retrying after ${String(seconds)} s`,
      type: 'SlackRateLimited',
      nextRetryDelay: `${String(seconds)} seconds`,
    });
  }
  if (failure.code === ErrorCode.PlatformError) {
    const code = failure.data?.error ?? 'unknown_error';
    const message = `Slack refused ${doing}: ${code}`;
    return LASTING_ERRORS.has(code)
      ? ApplicationFailure.nonRetryable(message, 'SlackRefused', { error: code })
      : ApplicationFailure.retryable(message, 'SlackUnavailable', { error: code });
  }
  if (failure.code === ErrorCode.HTTPError) {
    return ApplicationFailure.retryable(
      `Slack answered ${doing} with HTTP ${String(failure.statusCode ?? 'error')}`,
      'SlackUnavailable',
    );
  }
  // A request error (refused, reset, timed out) or anything unforeseen: Slack may be back soon.
  const reason = error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
  return ApplicationFailure.retryable(
    `Slack could not be reached ${doing}: ${reason}`,
    'SlackUnavailable',
  );
}

/** Where a message goes: a channel by id, or the app's direct message with a person by e-mail. */
export type SlackDestination = { channel: string } | { personEmail: string };

/**
 * The conversation a destination is: a channel's own id, or the direct message with the person
 * Slack knows by this e-mail (users.lookupByEmail, then conversations.open).
 */
export async function slackConversation(
  client: WebClient,
  destination: SlackDestination,
): Promise<string> {
  if ('channel' in destination) return destination.channel;
  let userId: string | undefined;
  try {
    const found = await client.users.lookupByEmail({ email: destination.personEmail });
    userId = found.user?.id;
  } catch (error) {
    throw slackFailure(error, 'looking the person up by e-mail');
  }
  if (!userId) {
    throw ApplicationFailure.nonRetryable('Slack knows nobody by this e-mail', 'SlackRefused');
  }
  try {
    const opened = await client.conversations.open({ users: userId });
    const id = opened.channel?.id;
    if (!id) throw new Error('conversations.open answered no channel');
    return id;
  } catch (error) {
    throw slackFailure(error, 'opening the direct message');
  }
}

/**
 * A message this notice posted before, found by its metadata in the conversation's recent
 * history: an attempt cut off after Slack took the post (a worker that died, a timeout) is then
 * not posted a second time.
 */
export async function findPostedNotice(
  client: WebClient,
  channel: string,
  noticeId: string,
  since: Date,
): Promise<string | null> {
  try {
    const history = await client.conversations.history({
      channel,
      oldest: String(Math.floor(since.getTime() / 1000) - 60),
      include_all_metadata: true,
      limit: 200,
    });
    for (const message of history.messages ?? []) {
      const payload: Record<string, unknown> = { ...message.metadata?.event_payload };
      if (message.metadata?.event_type === SLACK_NOTICE_EVENT && payload.notice === noticeId) {
        return message.ts ?? null;
      }
    }
    return null;
  } catch (error) {
    throw slackFailure(error, 'looking for an earlier post');
  }
}

export async function postSlackNotice(
  client: WebClient,
  channel: string,
  message: SlackMessage,
  notice: { approvalId: string; noticeId: string },
): Promise<{ channelId: string; ts: string }> {
  try {
    const posted = await client.chat.postMessage({
      channel,
      text: message.text,
      blocks: message.blocks,
      metadata: {
        event_type: SLACK_NOTICE_EVENT,
        event_payload: { approval_id: notice.approvalId, notice: notice.noticeId },
      },
      unfurl_links: false,
      unfurl_media: false,
    });
    if (!posted.ts || !posted.channel) throw new Error('chat.postMessage answered no ts');
    return { channelId: posted.channel, ts: posted.ts };
  } catch (error) {
    throw error instanceof ApplicationFailure ? error : slackFailure(error, 'the post');
  }
}

export async function updateSlackNotice(
  client: WebClient,
  where: { channelId: string; ts: string },
  message: SlackMessage,
): Promise<void> {
  try {
    await client.chat.update({
      channel: where.channelId,
      ts: where.ts,
      text: message.text,
      blocks: message.blocks,
    });
  } catch (error) {
    throw slackFailure(error, 'updating the message');
  }
}
