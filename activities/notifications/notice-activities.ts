import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps.js';
import {
  claimNotice,
  markNoticeFailed,
  markNoticeSent,
  noteSlackChannel,
  planNotices,
  slackMessagesOf,
  type NoticeRound,
  type PlannedNotice,
} from '../db/approval-notifications.js';
import { approvalView, findApproval, widenApprovalAudience } from '../db/approvals.js';
import { findEnvironmentById } from '../db/environments.js';
import { openNotificationChannels } from '../db/notification-channels.js';
import { teamsWebhookUrl, teamsWebhookHost } from '../db/notification-routes.js';
import { approvalNotifications } from '../../infra/telemetry/metrics.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import { notificationTargets, type NotificationTarget } from './notification-targets.js';
import { sendApprovalEmail } from './send-email.js';
import {
  findPostedNotice,
  postSlackNotice,
  slackClient,
  slackConversation,
  slackFailure,
  updateSlackNotice,
} from './send-slack.js';
import { postTeamsCard } from './send-teams.js';
import { slackApprovalMessage, slackDecidedMessage } from './slack-message.js';
import { teamsApprovalCard, teamsWebhookMessage } from './teams-card.js';

/**
 * The activities that tell approvers of a held call (README "Tell approvers where they work"),
 * run by the call workflow (workflows/approval-notices.ts):
 *
 * - `planApprovalNotices`: who is told this round, written as pending rows (one per destination);
 * - `sendApprovalNotice`: one message, recorded before and after it goes, so an attempt repeated
 *   after a crash or a timeout sends nothing twice: a message recorded sent is not sent again,
 *   and a Slack post cut off mid-attempt is looked up by its metadata before posting again;
 * - `refreshSlackNotices`: the approval's Slack messages rewritten as it now stands (the tally
 *   after each decision, who decided once settled), whatever path the decision took;
 * - `escalateApproval`: the escalation entries added to those asked.
 *
 * Chat messages link to the console's review page, where a person signs in: a channel is read by
 * many, and a decision link in it would let any reader decide as the addressee. Only e-mail, which
 * goes to one address, carries that addressee's signed links.
 */

export interface NoticeRequest {
  environmentId: string;
  approvalId: string;
  round: NoticeRound;
  target: NotificationTarget;
}

/**
 * The most messages one round sends: each is an activity in the call's Temporal history, which a
 * group of thousands reached person by person would fill. A group that large is reached through
 * its mailbox or channel.
 */
export const MAX_MESSAGES_PER_ROUND = 200;

/** Well inside the send activity's heartbeat timeout (workflows/approval-notices.ts). */
const HEARTBEAT_EVERY_MS = 2_000;

export type NoticeOutcome = 'sent' | 'already_sent' | 'skipped' | 'gone';

/** The console's page for an approval: chat messages send people there, to sign in and decide. */
function consoleReviewUrl(publicUrl: string, environment: string, approvalId: string): string {
  return `${publicUrl}/console/${encodeURIComponent(environment)}/inbox/${approvalId}`;
}

/** Where a target goes, in words fit for the approval record (never a secret). */
async function shownTo(
  deps: ActivityDeps,
  environmentId: string,
  target: NotificationTarget,
): Promise<string> {
  const { to } = target;
  if (to.email !== undefined) return to.email;
  if (to.slackChannel !== undefined) return `#${to.slackChannel}`;
  if (to.slackDmEmail !== undefined) return `@${to.slackDmEmail}`;
  if (to.teamsWebhookRef !== undefined) {
    const host = await teamsWebhookHost(deps.sql, environmentId, to.teamsWebhookRef);
    return host ?? 'a Teams webhook since removed';
  }
  return 'unknown';
}

/** The one person's address a target goes to (an e-mail or a Slack direct message), if any. */
function personalAddress(target: NotificationTarget): string | null {
  if (target.shared) return null;
  return (target.to.slackDmEmail ?? target.to.email)?.toLowerCase() ?? null;
}

export function noticeActivities(deps: ActivityDeps) {
  const { sql, config, logger } = deps;

  async function planApprovalNotices(input: {
    environmentId: string;
    approvalId: string;
    round: NoticeRound;
    /** Escalation: the entries escalated to, whose people alone are told this round. */
    audience?: string[];
  }): Promise<NotificationTarget[]> {
    const approval = await findApproval(sql, input.environmentId, input.approvalId);
    if (!approval || approval.status !== 'pending') return [];
    let targets = await notificationTargets(sql, input.environmentId, {
      id: approval.id,
      requested_from: input.audience ?? approval.requestedFrom,
    });
    if (input.round === 'reminder') {
      // A reminder goes to those who have not decided: not to a person who already approved.
      const decided = new Set(approval.decisions.map((decision) => decision.identity));
      targets = targets.filter((target) => {
        const address = personalAddress(target);
        return address === null || !decided.has(`person:${address}`);
      });
    }
    // Shared destinations first (a mailbox, a channel, a Teams webhook): each reaches many, so a
    // round over the bound leaves out personal messages rather than them.
    targets = [...targets.filter((t) => t.shared), ...targets.filter((t) => !t.shared)];
    const planned: PlannedNotice[] = await Promise.all(
      targets.map(async (target) => ({
        targetKey: target.key,
        channel: target.channel,
        addressee: target.addressee,
        shownTo: await shownTo(deps, input.environmentId, target),
      })),
    );
    await planNotices(sql, input.environmentId, approval.id, input.round, planned);
    // Each message is an activity in the call's history: a bound keeps a huge group from filling
    // it. Those past the bound are recorded as not sent, with why, never silently dropped.
    const over = planned.slice(MAX_MESSAGES_PER_ROUND);
    for (const notice of over) {
      await markNoticeFailed(
        sql,
        approval.id,
        input.round,
        notice.targetKey,
        'skipped',
        `more than ${String(MAX_MESSAGES_PER_ROUND)} destinations in one round: route a group mailbox or channel instead`,
      );
    }
    if (over.length > 0) {
      logger.warn(
        { approvalId: approval.id, round: input.round, skipped: over.length },
        'approval notifications over the bound of one round were not sent',
      );
    }
    return targets.slice(0, MAX_MESSAGES_PER_ROUND);
  }

  /**
   * One message, sent once: see the module's comment. Heartbeats while it works, so a worker that
   * dies mid-send is noticed within the heartbeat timeout and the next attempt (which looks before
   * it posts again) comes soon.
   */
  async function sendApprovalNotice(request: NoticeRequest): Promise<NoticeOutcome> {
    const context = Context.current();
    const beat = setInterval(() => {
      context.heartbeat();
    }, HEARTBEAT_EVERY_MS);
    try {
      return await sendOnce(request, context);
    } finally {
      clearInterval(beat);
    }
  }

  async function sendOnce(request: NoticeRequest, context: Context): Promise<NoticeOutcome> {
    const { environmentId, approvalId, round, target } = request;
    const log = logger.child({
      approvalId,
      round,
      channel: target.channel,
      attempt: context.info.attempt,
    });
    const before = await claimNotice(sql, approvalId, round, target.key);
    if (!before) return 'gone';
    if (before.status === 'sent') return 'already_sent';
    if (before.status === 'skipped') return 'skipped';
    const skip = async (reason: string): Promise<NoticeOutcome> => {
      await markNoticeFailed(sql, approvalId, round, target.key, 'skipped', reason);
      approvalNotifications.inc({ channel: target.channel, outcome: 'skipped' });
      log.info({ reason }, 'approval notification not sent');
      return 'skipped';
    };
    try {
      const [approval, environment, channels] = await Promise.all([
        findApproval(sql, environmentId, approvalId),
        findEnvironmentById(sql, environmentId),
        openNotificationChannels(sql, config.encryption, environmentId),
      ]);
      if (!approval || !environment) return await skip('the approval is gone');
      if (approval.status !== 'pending' || approval.expiresAt.getTime() <= Date.now()) {
        return await skip(`the approval was already ${approval.status}`);
      }
      const view = approvalView(approval);
      const reviewUrl = consoleReviewUrl(config.api.publicUrl, environment.name, approvalId);
      switch (target.channel) {
        case 'email': {
          const to = target.to.email;
          if (!channels.email || to === undefined) return await skip('no e-mail channel is set');
          const sent = await sendApprovalEmail(deps, channels.email, {
            environmentId,
            approvalId,
            addressee: target.addressee,
            to,
            keyAgentId: target.keyAgentId,
          });
          if (sent.outcome === 'not_pending') {
            return await skip(`the approval was already ${sent.status}`);
          }
          await markNoticeSent(sql, approvalId, round, target.key);
          break;
        }
        case 'slack': {
          if (!channels.slack) return await skip('no Slack app is set');
          const client = slackClient(channels.slack);
          const destination =
            target.to.slackChannel !== undefined
              ? { channel: target.to.slackChannel }
              : target.to.slackDmEmail !== undefined
                ? { personEmail: target.to.slackDmEmail }
                : null;
          if (destination === null) return await skip('no Slack destination');
          const noticeId = `${round}:${target.key}`;
          // An earlier attempt that was cut off may have posted already: look before posting.
          if (before.status === 'sending' && before.slackChannelId !== null) {
            const ts = await findPostedNotice(
              client,
              before.slackChannelId,
              noticeId,
              before.createdAt,
            );
            if (ts !== null) {
              await markNoticeSent(sql, approvalId, round, target.key, {
                channelId: before.slackChannelId,
                ts,
              });
              log.info('approval notification found posted by an earlier attempt');
              break;
            }
          }
          const channel = await slackConversation(client, destination);
          await noteSlackChannel(sql, approvalId, round, target.key, channel);
          const posted = await postSlackNotice(
            client,
            channel,
            slackApprovalMessage(view, reviewUrl),
            {
              approvalId,
              noticeId,
            },
          );
          await markNoticeSent(sql, approvalId, round, target.key, posted);
          break;
        }
        case 'teams': {
          const ref = target.to.teamsWebhookRef;
          const url =
            ref === undefined
              ? null
              : await teamsWebhookUrl(sql, config.encryption, environmentId, ref);
          if (!channels.teams || url === null)
            return await skip('the Teams route is no longer set');
          await postTeamsCard(
            url,
            teamsWebhookMessage(teamsApprovalCard(view, reviewUrl)),
            config.notifications.allowPrivate,
          );
          await markNoticeSent(sql, approvalId, round, target.key);
          break;
        }
      }
      approvalNotifications.inc({ channel: target.channel, outcome: 'sent' });
      log.info('approval notification sent');
      return 'sent';
    } catch (error) {
      const failure =
        error instanceof ApplicationFailure
          ? error
          : ApplicationFailure.retryable(
              error instanceof Error ? error.message.slice(0, 300) : 'unknown error',
              'NotificationFailed',
            );
      const outcome = failure.nonRetryable ? 'failed' : 'retrying';
      await markNoticeFailed(sql, approvalId, round, target.key, outcome, failure.message).catch(
        () => undefined,
      );
      approvalNotifications.inc({ channel: target.channel, outcome });
      log.warn({ type: failure.type, reason: failure.message }, 'approval notification failed');
      throw failure;
    }
  }

  /** The approval's Slack messages rewritten as it stands now (see the module's comment). */
  async function refreshSlackNotices(input: {
    environmentId: string;
    approvalId: string;
  }): Promise<number> {
    const messages = await slackMessagesOf(sql, input.approvalId);
    if (messages.length === 0) return 0;
    const [approval, environment, channels] = await Promise.all([
      findApproval(sql, input.environmentId, input.approvalId),
      findEnvironmentById(sql, input.environmentId),
      openNotificationChannels(sql, config.encryption, input.environmentId),
    ]);
    if (!approval || !environment || !channels.slack) return 0;
    const view: ApprovalView = approvalView(approval);
    const reviewUrl = consoleReviewUrl(config.api.publicUrl, environment.name, approval.id);
    const message =
      view.status === 'pending'
        ? slackApprovalMessage(view, reviewUrl)
        : slackDecidedMessage(view, reviewUrl);
    const client = slackClient(channels.slack);
    for (const where of messages) {
      try {
        await updateSlackNotice(client, where, message);
      } catch (error) {
        const failure =
          error instanceof ApplicationFailure ? error : slackFailure(error, 'updating');
        // A message deleted in Slack, or a channel the app left, does not hold up the others.
        if (failure.nonRetryable) {
          logger.warn(
            { approvalId: approval.id, reason: failure.message },
            'Slack message not updated',
          );
          continue;
        }
        throw failure;
      }
    }
    return messages.length;
  }

  async function escalateApproval(input: {
    environmentId: string;
    approvalId: string;
    to: string[];
  }): Promise<ApprovalView | null> {
    const widened = await widenApprovalAudience(
      sql,
      input.environmentId,
      input.approvalId,
      input.to,
    );
    if (widened) logger.info({ approvalId: input.approvalId, to: input.to }, 'approval escalated');
    return widened ? approvalView(widened) : null;
  }

  return { planApprovalNotices, sendApprovalNotice, refreshSlackNotices, escalateApproval };
}
