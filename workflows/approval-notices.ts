/**
 * Telling the people asked, inside the call workflow that holds the call: a part of its story,
 * run beside the wait for a decision.
 *
 *   held      → tell those asked (each destination once: e-mail, Slack, Teams)
 *   remind    → after remind_after_seconds, if still undecided: tell them again
 *   escalate  → after escalate_after_seconds, if still undecided: ask escalate_to too, and tell them
 *   decided   → the Slack messages show the tally after each decision, and the outcome at the end
 *
 * Timers are the workflow's, so they survive restarts of every process, and a decision, a
 * cancellation or the expiry ends them (the condition they wait on is the approval being open).
 * Each message is an activity of its own with retries and backoff, bounded by the approval's
 * expiry; it records itself before and after it goes (activities/notifications/
 * notice-activities.ts), so a retry never sends twice. Nothing here waits for a message: a relay
 * that is down for an hour holds up neither the reminders nor the caller.
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ApprovalView } from './call-types.js';

/** The policy's reminder and escalation settings for one held call (absent: none). */
export interface NoticeSchedule {
  remind_after_seconds?: number;
  escalate_after_seconds?: number;
  escalate_to?: string[];
}

type Round = 'requested' | 'reminder' | 'escalation';

/**
 * Slack's messages are rewritten after each decision; one at a time, in order, so an older
 * rewrite never lands after a newer one.
 */
const slackUpdates = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // The workflow waits for the last rewrite before it closes: bounded, so a Slack that is down
  // holds a finished call open for minutes, not hours.
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * The activities of notices, retried with backoff (2 s doubling up to 5 min, or Slack's and
 * Teams' Retry-After) until the approval expires: Postgres or a channel down for an hour delays
 * a message, and loses none while it could still be decided. A message's own timeouts (SMTP 10 s
 * to connect, 30 s of silence; Slack and Teams 10 s) stay well inside the start-to-close timeout.
 */
function activitiesUntil(expiresAt: number) {
  return proxyActivities<Activities>({
    startToCloseTimeout: '1 minute',
    // A message's activity heartbeats while it sends: a worker that died is noticed in seconds.
    heartbeatTimeout: '10 seconds',
    scheduleToCloseTimeout: Math.max(expiresAt - Date.now(), 60_000),
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });
}

export class ApprovalNotices {
  private slackChain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly environmentId: string,
    private readonly approval: ApprovalView,
    /** Whether the approval still waits for decisions (not settled, cancelled or past expiry). */
    private readonly open: () => boolean,
  ) {}

  /**
   * The whole story of notices for this approval; resolves once its last timer has fired or the
   * approval was settled. `escalated` gets the approval once escalate_to has been asked too.
   */
  async run(schedule: NoticeSchedule, escalated: (view: ApprovalView) => void): Promise<void> {
    const openedAt = Date.parse(this.approval.created_at);
    const expiresAt = Date.parse(this.approval.expires_at);
    await this.tell('requested', expiresAt);
    const steps: { at: number; step: () => Promise<void> }[] = [];
    if (schedule.remind_after_seconds !== undefined) {
      const at = openedAt + schedule.remind_after_seconds * 1000;
      steps.push({ at, step: () => this.tell('reminder', expiresAt) });
    }
    const escalateTo = schedule.escalate_to ?? [];
    if (schedule.escalate_after_seconds !== undefined && escalateTo.length > 0) {
      const at = openedAt + schedule.escalate_after_seconds * 1000;
      steps.push({
        at,
        step: async () => {
          const view = await activitiesUntil(expiresAt).escalateApproval({
            environmentId: this.environmentId,
            approvalId: this.approval.id,
            to: escalateTo,
          });
          if (view === null || !this.open()) return;
          escalated(view);
          await this.tell('escalation', expiresAt, escalateTo);
        },
      });
    }
    steps.sort((a, b) => a.at - b.at);
    for (const { at, step } of steps) {
      if (at >= expiresAt) break;
      const ended = await condition(() => !this.open(), Math.max(at - Date.now(), 1));
      if (ended) return;
      await step();
    }
  }

  /** The approval changed (a decision, the end): its Slack messages follow, in order. */
  changed(): void {
    const refresh = () =>
      slackUpdates.refreshSlackNotices({
        environmentId: this.environmentId,
        approvalId: this.approval.id,
      });
    // A failed rewrite does not stop the next one, which shows the newer state anyway.
    this.slackChain = this.slackChain.then(refresh, refresh).catch(() => undefined);
  }

  /** Resolves once the queued Slack rewrites are done (the workflow waits before it closes). */
  async updated(): Promise<void> {
    await this.slackChain;
  }

  private async tell(round: Round, expiresAt: number, audience?: string[]): Promise<void> {
    if (!this.open()) return;
    const { planApprovalNotices, sendApprovalNotice } = activitiesUntil(expiresAt);
    const targets = await planApprovalNotices({
      environmentId: this.environmentId,
      approvalId: this.approval.id,
      round,
      ...(audience ? { audience } : {}),
    });
    for (const target of targets) {
      // Each failure is recorded by the activity itself (the approval record, a metric, a log
      // line); the story goes on without waiting for any message.
      void sendApprovalNotice({
        environmentId: this.environmentId,
        approvalId: this.approval.id,
        round,
        target,
      }).catch(() => undefined);
    }
  }
}
