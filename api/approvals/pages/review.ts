import type { ApprovalView } from '../../../workflows/call-types.js';
import { html, type Html } from '../../connect/pages/html.js';
import { alertIcon, brandHeader, keep, lockIcon, supportLine } from '../../connect/pages/parts.js';
import { resolveBranding } from '../../connect/pages/theme.js';
import type { ConnectBranding } from '../../connect/pages/types.js';
import { GENERIC_APPROVER, type LinkChoice } from '../../../activities/approvals/link-token.js';
import { LEGACY_ANY_APPROVER } from '../../../workflows/decider-rules.js';
import { renderReviewLayout } from './layout.js';
import { grantChoice } from './grant-choice.js';
import { requestDetails } from './request-details.js';
import { utcTime } from './time.js';

export interface ReviewPageOptions {
  branding: ConnectBranding;
  approval: ApprovalView;
  /** The approver the link names: `decided_by` of a decision made here. */
  approver: string;
  /** Where the form posts: the link's own URL. */
  formAction: string;
  /** The hidden field that proves the form was rendered here for this link. */
  formToken: string;
  /** Why this link's approver may not decide (four eyes); the form is then left out. */
  refusal?: string | null;
  /** The longest grant the policy allows with an approval; 0 or absent: none. */
  maxGrantSeconds?: number;
  /**
   * The button a one-click link (an e-mail's Approve or Reject) chose: offered first, focused and
   * named in a line above the form. Opening the page still decides nothing; pressing it does.
   */
  choice?: LinkChoice | null;
}

/** The generic link's addressee, as links name it now and as they named it before. */
const anyone: readonly string[] = [GENERIC_APPROVER, LEGACY_ANY_APPROVER];

/** For an approval that needs several: how many approved so far, and who. */
function approvalsSoFar(approval: ApprovalView): Html | null {
  const quorum = approval.quorum ?? 1;
  if (quorum <= 1) return null;
  const approvers = (approval.decisions ?? [])
    .filter((decision) => decision.decision === 'approve')
    .map((decision) => decision.by);
  return html`<dt>Approvals</dt>
    <dd>
      ${String(approvers.length)} of ${String(quorum)} different people
      ${approvers.length > 0 ? html`(${approvers.join(', ')})` : null}
    </dd>`;
}

function facts(approval: ApprovalView, approver: string): Html {
  const { policy } = approval;
  return html`<dl class="facts">
    <dt>Agent</dt>
    <dd>${approval.agent_id}</dd>
    <dt>For user</dt>
    <dd>${approval.user}</dd>
    <dt>Action</dt>
    <dd><code>${approval.action}</code> · ${approval.scope}</dd>
    <dt>Policy</dt>
    <dd>
      <code>${policy.id}</code> version ${policy.version}
      ${policy.rule ? html`<span class="rule">${policy.rule}</span>` : null}
    </dd>
    <dt>Asked</dt>
    <dd>${utcTime(approval.created_at)}</dd>
    <dt>Valid until</dt>
    <dd>${utcTime(approval.expires_at)}</dd>
    <dt>Deciding as</dt>
    <dd>${keep(approver)}${anyone.includes(approver) ? ' (anyone holding this link)' : null}</dd>
    ${approvalsSoFar(approval)}
    <dt>Approval</dt>
    <dd><code>${approval.id}</code></dd>
  </dl>`;
}

const BUTTONS: Record<LinkChoice, { label: string; className: string }> = {
  approve: { label: 'Approve', className: 'button' },
  reject: { label: 'Reject', className: 'button reject' },
};

function decisionButton(decision: LinkChoice, chosen: LinkChoice | null): Html {
  const { label, className } = BUTTONS[decision];
  const emphasis = chosen === null ? '' : chosen === decision ? ' chosen' : ' other';
  // The chosen one has the focus: Enter, or one press, confirms it.
  const focus = chosen === decision ? html` autofocus` : null;
  return html`<button
    class="${className + emphasis}"
    type="submit"
    name="decision"
    value="${decision}"
    ${focus}
  >
    ${label}
  </button>`;
}

/** The line above the buttons when a one-click link chose one: what is left to do. */
function chosenLine(choice: LinkChoice): Html {
  return html`<p class="chosen-line" role="status">
    You chose <strong>${BUTTONS[choice].label}</strong>. Nothing is decided yet: press
    ${BUTTONS[choice].label} below to confirm, or choose otherwise.
  </p>`;
}

function decisionForm(options: ReviewPageOptions): Html {
  const choice = options.choice ?? null;
  const order: LinkChoice[] = choice === 'reject' ? ['reject', 'approve'] : ['approve', 'reject'];
  return html`<form method="post" action="${options.formAction}">
      <input type="hidden" name="csrf" value="${options.formToken}" />
      ${grantChoice(options.approval, options.maxGrantSeconds ?? 0)}
      ${choice === null ? null : chosenLine(choice)}
      <div class="actions">${order.map((decision) => decisionButton(decision, choice))}</div>
    </form>
    <p class="fine">
      ${lockIcon(12)}Your decision is final and recorded as ${keep(options.approver)}. Approved, the
      agent&rsquo;s next identical call runs once; rejected, it does not run.
    </p>`;
}

/**
 * The page a decision link opens: everything the approver must see to judge the held call, and
 * Approve / Reject as a POST. Opening it decides nothing, so link previews and prefetchers are
 * harmless.
 */
export function renderReviewPage(options: ReviewPageOptions): string {
  const branding = resolveBranding(options.branding);
  const { approval } = options;
  const refusal = options.refusal ?? null;
  const card = html`${brandHeader(branding)}
    <p class="eyebrow">Approval requested</p>
    <h1>${keep(approval.agent_id)} asks to run ${keep(approval.action)}</h1>
    <p class="lead">
      The call is held until someone decides. Nothing runs unless it is approved, and what runs is
      exactly what is shown here.
    </p>
    ${facts(approval, options.approver)} ${requestDetails(approval.request)}
    ${
      refusal === null
        ? decisionForm(options)
        : html`<div class="notice" role="alert">
            ${alertIcon(18)}<span
              ><strong>You cannot decide this approval through this link.</strong> ${refusal}</span
            >
          </div>`
    }`;
  return renderReviewLayout({
    branding,
    title: `Approve ${approval.action}? · ${branding.displayName}`,
    card,
    after: supportLine(branding),
  });
}
