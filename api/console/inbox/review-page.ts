import type { ApprovalView } from '../../../workflows/call-types.js';
import type { ApprovalNotice } from '../../approvals/approval-notices.js';
import { grantChoice } from '../../approvals/pages/grant-choice.js';
import { requestDetails } from '../../approvals/pages/request-details.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

export interface ReviewOptions {
  branding: ResolvedBranding;
  viewer: Viewer;
  approval: ApprovalView;
  /** Why this person may not decide it (not asked, already decided, owns the agent's key…). */
  refusal: string | null;
  maxGrantSeconds: number;
  /** What just happened, after a decision posted from here. */
  notice?: { good: boolean; text: string };
  /** The messages sent about the approval (e-mail, Slack, Teams), oldest first. */
  notices?: readonly ApprovalNotice[];
}

const CHANNEL_WORDS: Record<ApprovalNotice['channel'], string> = {
  email: 'E-mail',
  slack: 'Slack',
  teams: 'Teams',
};

/** Who was told, where, and how it went: failures shown, never hidden. */
function told(notices: readonly ApprovalNotice[]): Html {
  return html`<section class="part" aria-labelledby="told-title">
    <h2 id="told-title">Who was told</h2>
    ${
      notices.length === 0
        ? html`<p class="none">No message was sent: no channel or route reaches those asked.</p>`
        : html`<ul>
            ${notices.map(
              (notice) =>
                html`<li>
                  ${CHANNEL_WORDS[notice.channel]} to <strong>${notice.to}</strong>
                  ${notice.round === 'requested' ? null : html`(${notice.round})`}:
                  ${notice.status}${notice.sent_at ? html` at ${utcTime(notice.sent_at)}` : null}
                  ${
                    notice.last_error && notice.status !== 'sent'
                      ? html`<span class="muted"
                          >after ${String(notice.attempts)}
                          ${notice.attempts === 1 ? 'attempt' : 'attempts'}:
                          ${notice.last_error}</span
                        >`
                      : null
                  }
                </li>`,
            )}
          </ul>`
    }
  </section>`;
}

function decisions(approval: ApprovalView): Html {
  const list = approval.decisions ?? [];
  const quorum = approval.quorum ?? 1;
  const needed = approval.approvals_needed ?? 0;
  return html`<section class="part" aria-labelledby="decisions-title">
    <h2 id="decisions-title">Decisions</h2>
    <p>
      ${
        quorum === 1
          ? 'One approval runs the call; one rejection stops it.'
          : `${String(quorum)} different people must approve; one rejection stops it.`
      }
      ${
        approval.status === 'pending' &&
        html`<strong
          >${needed === 1 ? '1 more approval' : `${String(needed)} more approvals`} needed.</strong
        >`
      }
    </p>
    ${
      list.length === 0
        ? html`<p class="none">Nobody has decided yet.</p>`
        : html`<ul>
            ${list.map(
              (decision) =>
                html`<li>
                  <strong>${decision.name ?? decision.by}</strong>
                  ${decision.name ? html`<span class="muted">(${decision.by})</span>` : null}
                  ${decision.decision === 'approve' ? 'approved' : 'rejected'}
                  ${
                    decision.via === 'link'
                      ? 'through a decision link'
                      : decision.via === 'slack'
                        ? 'in Slack'
                        : null
                  }
                  at ${utcTime(decision.at)}
                </li>`,
            )}
          </ul>`
    }
  </section>`;
}

function facts(approval: ApprovalView): Html {
  return html`<dl class="facts">
    <dt>Status</dt>
    <dd><span class="badge">${approval.status}</span></dd>
    <dt>Agent</dt>
    <dd>${approval.agent_id}</dd>
    <dt>For user</dt>
    <dd>${approval.user}</dd>
    <dt>Action</dt>
    <dd><code>${approval.action}</code> · ${approval.scope}</dd>
    <dt>Policy</dt>
    <dd>
      <code>${approval.policy.id}</code> version
      ${approval.policy.version}${approval.policy.rule ? html` · ${approval.policy.rule}` : null}
    </dd>
    <dt>Asked of</dt>
    <dd>
      ${approval.requested_from.length === 0 ? 'any approver' : approval.requested_from.join(', ')}
    </dd>
    <dt>Asked</dt>
    <dd>${utcTime(approval.created_at)}</dd>
    <dt>Valid until</dt>
    <dd>${utcTime(approval.expires_at)}</dd>
    <dt>Approval</dt>
    <dd><code>${approval.id}</code></dd>
  </dl>`;
}

/** One held call as an approver reviews it: the hosted page's review, inside the console. */
export function renderReview(options: ReviewOptions): string {
  const { approval, viewer } = options;
  const form =
    approval.status !== 'pending'
      ? null
      : options.refusal !== null
        ? html`<p class="notice" role="alert">
            <strong>You cannot decide this approval.</strong> ${options.refusal}
          </p>`
        : html`<form method="post" action="${viewer.base}/inbox/${approval.id}">
            <input type="hidden" name="csrf" value="${viewer.formToken}" />
            ${grantChoice(approval, options.maxGrantSeconds)}
            <div class="actions">
              <button type="submit" name="decision" value="approve">Approve</button>
              <button class="danger" type="submit" name="decision" value="reject">Reject</button>
            </div>
            <p class="muted">
              Recorded as ${viewer.name} (${viewer.email}). Approved, the agent’s next identical
              call runs
              once${
                (approval.approvals_needed ?? 1) > 1 ? ', after the approvals still needed' : ''
              };
              rejected, it does not run.
            </p>
          </form>`;
  return renderConsolePage({
    branding: options.branding,
    title: `${approval.action} for ${approval.user}`,
    section: 'inbox',
    viewer,
    body: html`<p><a href="${viewer.base}/inbox">← Inbox</a></p>
      <h1>${approval.agent_id} asks to run <code>${approval.action}</code></h1>
      ${
        options.notice &&
        html`<p class="notice ${options.notice.good ? 'good' : ''}" role="status">
          ${options.notice.text}
        </p>`
      }
      <div class="panel">${facts(approval)}</div>
      <div class="panel">${decisions(approval)}</div>
      ${options.notices && html`<div class="panel">${told(options.notices)}</div>`}
      <div class="panel">${requestDetails(approval.request)} ${form}</div>`,
  });
}
