import type { ApprovalView } from '../../../workflows/call-types.js';
import { renderErrorPage } from '../../connect/pages/error.js';
import { html, type Html } from '../../connect/pages/html.js';
import { keep } from '../../connect/pages/parts.js';
import type { ConnectBranding } from '../../connect/pages/types.js';
import { utcTime } from './time.js';

/** Why a decision link cannot be used now; each is one branded page (never JSON). */
export type ApprovalProblem =
  | 'link_invalid'
  | 'approval_expired'
  | 'approval_cancelled'
  | 'already_decided'
  | 'decider_refused'
  | 'cross_site_request'
  | 'form_invalid'
  | 'decision_invalid'
  | 'grant_refused'
  | 'decision_not_applied'
  | 'decision_unconfirmed'
  | 'service_unavailable'
  | 'internal_error';

const when = (iso: string | null): Html | null => (iso ? html` at ${utcTime(iso)}` : null);

const PROBLEMS: Record<
  ApprovalProblem,
  {
    status: number;
    title: string;
    message: (approval: ApprovalView | null, detail: string) => Html | string;
  }
> = {
  link_invalid: {
    status: 404,
    title: 'This link is not valid',
    message: () =>
      'Check that you opened the whole link. Decision links come with each approval request.',
  },
  approval_expired: {
    status: 410,
    title: 'This approval has expired',
    message: (approval) =>
      html`Nobody decided before it expired${when(approval?.expires_at ?? null)}, so the call did
      not run. If the agent asks again, a new approval is requested.`,
  },
  approval_cancelled: {
    status: 410,
    title: 'This request was withdrawn',
    message: () =>
      'The user the call was made for has been removed, so there is nothing left to decide.',
  },
  already_decided: {
    status: 409,
    title: 'This approval was already decided',
    message: (approval) =>
      approval?.decided_by
        ? html`It was ${approval.status} by
          ${keep(approval.decided_by)}${when(approval.decided_at)}. A decision cannot be changed.`
        : 'A decision cannot be changed.',
  },
  decider_refused: {
    status: 403,
    title: 'You cannot decide this approval',
    message: (_approval, detail) => `${detail} Nothing was decided.`,
  },
  cross_site_request: {
    status: 403,
    title: 'This decision came from another site',
    message: () => 'Nothing was decided. Open your decision link again and decide on its own page.',
  },
  form_invalid: {
    status: 403,
    title: 'This form could not be verified',
    message: () => 'Nothing was decided. Open your decision link again and decide on its own page.',
  },
  decision_invalid: {
    status: 400,
    title: 'This decision could not be read',
    message: () =>
      'Nothing was decided. Open your decision link again and choose Approve or Reject.',
  },
  grant_refused: {
    status: 400,
    title: 'This grant cannot be made',
    message: (_approval, detail) =>
      `${detail} Nothing was decided. Open your decision link again to decide.`,
  },
  decision_not_applied: {
    status: 503,
    title: 'Your decision was not applied',
    message: () =>
      'Gatehouse could not record it in time, and it will not be applied later: nothing was decided, and the call has not run. Wait a moment, then open your decision link again and try again.',
  },
  decision_unconfirmed: {
    status: 503,
    title: 'Your decision is not confirmed yet',
    message: () =>
      'It was taken but not confirmed in time, and may still be recorded. Open your decision link again in a moment to see where it stands before you decide again.',
  },
  service_unavailable: {
    status: 503,
    title: 'Gatehouse is briefly unavailable',
    message: () =>
      'If you were deciding, your decision may not have been recorded. Open your decision link again in a moment to see where it stands.',
  },
  internal_error: {
    status: 500,
    title: 'Something went wrong',
    message: () =>
      'Your decision may not have been recorded. Open your decision link again in a moment to see where it stands.',
  },
};

/** The page of a problem and its HTTP status. */
export function renderApprovalProblem(
  problem: ApprovalProblem,
  branding: ConnectBranding,
  context: { approval?: ApprovalView | null; detail?: string } = {},
): { status: number; page: string } {
  const text = PROBLEMS[problem];
  return {
    status: text.status,
    page: renderErrorPage({
      branding,
      title: text.title,
      message: text.message(context.approval ?? null, context.detail ?? ''),
      code: problem,
    }),
  };
}

/** The problem a non-pending approval presents (as `presentApproval` shows it). */
export function notPendingProblem(approval: ApprovalView): ApprovalProblem {
  switch (approval.status) {
    case 'approved':
    case 'rejected':
      return 'already_decided';
    case 'cancelled':
      return 'approval_cancelled';
    default:
      return 'approval_expired';
  }
}
