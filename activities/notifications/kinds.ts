/**
 * The kinds of channel an approver can be told through: e-mail (an SMTP relay), Slack (a Slack
 * app) and Microsoft Teams (a workflow webhook per route). One channel of each kind per
 * environment; routes say who is told through which.
 */
export const NOTIFICATION_KINDS = ['email', 'slack', 'teams'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/**
 * The kinds a person can opt out of: those that address one person (an e-mail to their address,
 * a Slack direct message). Teams is told through shared channels only, where an opt-out could not
 * leave one person out.
 */
export const OPT_OUT_KINDS = ['email', 'slack'] as const satisfies readonly NotificationKind[];
export type OptOutKind = (typeof OPT_OUT_KINDS)[number];

/** Slack's Web API; another is accepted only with NOTIFY_ALLOW_PRIVATE (a stand-in in tests). */
export const SLACK_API_BASE_URL = 'https://slack.com/api/';

/** What an operator reads: "E-mail", "Slack", "Microsoft Teams". */
export const KIND_LABELS: Record<NotificationKind, string> = {
  email: 'E-mail',
  slack: 'Slack',
  teams: 'Microsoft Teams',
};
