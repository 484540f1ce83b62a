import type { ApprovalView } from '../../../workflows/call-types.js';
import { html } from '../../connect/pages/html.js';
import { renderLayout } from '../../connect/pages/layout.js';
import { alertIcon, brandHeader, checkIcon, keep, supportLine } from '../../connect/pages/parts.js';
import { resolveBranding } from '../../connect/pages/theme.js';
import type { ConnectBranding } from '../../connect/pages/types.js';
import { grantMadeLine } from './grant-choice.js';
import { duration, utcTime } from './time.js';

export interface DecidedPageOptions {
  branding: ConnectBranding;
  /**
   * As the workflow recorded it: approved or rejected, with who and when; or still pending, when
   * this decision was one of several the approval needs.
   */
  approval: ApprovalView;
  /** How long the agent has to retry an approved call (APPROVED_RETRY_WINDOW_SECONDS). */
  retryWindowSeconds: number;
}

/** An approval still waiting for other approvers after this one's: it does not run yet. */
function renderAwaitingOthers(options: DecidedPageOptions): string {
  const branding = resolveBranding(options.branding);
  const { approval } = options;
  const needed = approval.approvals_needed ?? 0;
  const card = html`${brandHeader(branding)}
    <div class="status status-success">${checkIcon(28)}</div>
    <h1>Approval recorded</h1>
    <p class="lead">
      Your approval of <strong class="keep">${approval.action}</strong> for ${keep(approval.user)},
      asked by ${keep(approval.agent_id)}, is recorded.
    </p>
    <p class="close">
      It needs ${String(needed)} more approval${needed === 1 ? '' : 's'} from other people before it
      runs, until ${utcTime(approval.expires_at)}. You can close this window.
    </p>`;
  return renderLayout({
    branding,
    title: `Approval recorded · ${approval.action}`,
    card,
    after: supportLine(branding),
  });
}

/** What the approver sees once the workflow has recorded their decision. */
export function renderDecidedPage(options: DecidedPageOptions): string {
  if (options.approval.status === 'pending') return renderAwaitingOthers(options);
  const branding = resolveBranding(options.branding);
  const { approval } = options;
  const approved = approval.status === 'approved';
  const what = html`<strong class="keep">${approval.action}</strong> for ${keep(approval.user)},
    asked by ${keep(approval.agent_id)},`;
  const by = html`by
    <strong class="keep">${approval.decided_by ?? 'unknown'}</strong>
    ${approval.decided_at ? html`at ${utcTime(approval.decided_at)}` : null}`;

  const card = html`${brandHeader(branding)}
    <div class="status ${approved ? 'status-success' : 'status-error'}">
      ${approved ? checkIcon(28) : alertIcon(28)}
    </div>
    <h1>${approved ? 'Approved' : 'Rejected'}</h1>
    <p class="lead">${what} was ${approved ? 'approved' : 'rejected'} ${by}.</p>
    <p class="close">
      ${
        approved
          ? html`The call runs, exactly once: right away if the agent is waiting for this decision,
            otherwise when the agent sends it again, within ${duration(options.retryWindowSeconds)};
            after that it asks for approval again.`
          : html`The call will not run: the agent&rsquo;s identical calls are denied until
            ${utcTime(approval.expires_at)}.`
      }
      You can close this window.
    </p>
    ${grantMadeLine(approval)}`;

  return renderLayout({
    branding,
    title: `${approved ? 'Approved' : 'Rejected'} · ${approval.action}`,
    card,
    after: supportLine(branding),
  });
}
