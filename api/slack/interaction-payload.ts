import { z } from 'zod';
import { SLACK_APPROVAL_ACTIONS } from '../../activities/notifications/slack-message.js';

/**
 * What Gatehouse reads of an interaction payload Slack sends (docs.slack.dev, "block_actions
 * payloads"): who pressed, where, and which button with which value. Everything else Slack sends
 * along is left unread; a payload of another type (a shortcut, a view submission) is not ours to
 * answer and is acknowledged as nothing.
 */

const slackId = z.string().regex(/^[A-Z0-9]{2,30}$/);

const blockActions = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: slackId }),
  channel: z.object({ id: slackId }).optional(),
  container: z.object({ channel_id: slackId.optional() }).optional(),
  actions: z
    .array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() }))
    .min(1)
    .max(25),
});

export type SlackPress =
  | {
      kind: 'decide';
      decision: 'approve' | 'reject';
      approvalId: string;
      userId: string;
      /** Where an answer only the presser sees goes (the message's conversation). */
      channelId: string | null;
    }
  /** Not a decision (the Review link, another app's button, another payload type): nothing to do. */
  | { kind: 'ignored' };

const APPROVAL_ID = z.uuid();

/**
 * The press in a form body's `payload` field, or why it cannot be read (an InvalidRequestError's
 * message). Only the first of Gatehouse's decision buttons counts: a message has one Approve and
 * one Reject, and Slack sends one press at a time.
 */
export function readSlackPress(rawBody: Buffer): SlackPress | { invalid: string } {
  const payload = new URLSearchParams(rawBody.toString('utf8')).get('payload');
  if (payload === null) return { invalid: 'The form has no payload field.' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { invalid: 'The payload is not JSON.' };
  }
  const type = (parsed as { type?: unknown } | null)?.type;
  if (typeof parsed !== 'object' || parsed === null || typeof type !== 'string') {
    return { invalid: 'The payload has no type.' };
  }
  if (type !== 'block_actions') return { kind: 'ignored' };
  const actions = blockActions.safeParse(parsed);
  if (!actions.success) return { invalid: 'The block_actions payload cannot be read.' };
  const { data } = actions;
  for (const action of data.actions) {
    const decision =
      action.action_id === SLACK_APPROVAL_ACTIONS.approve
        ? 'approve'
        : action.action_id === SLACK_APPROVAL_ACTIONS.reject
          ? 'reject'
          : null;
    if (decision === null) continue;
    const approvalId = APPROVAL_ID.safeParse(action.value);
    if (!approvalId.success) return { invalid: 'The button carries no approval id.' };
    return {
      kind: 'decide',
      decision,
      approvalId: approvalId.data,
      userId: data.user.id,
      channelId: data.channel?.id ?? data.container?.channel_id ?? null,
    };
  }
  return { kind: 'ignored' };
}
