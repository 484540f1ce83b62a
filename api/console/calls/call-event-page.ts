import { z } from 'zod';
import type { AuditEvent } from '../../../activities/db/audit-events.js';
import type { ApprovalView } from '../../../workflows/call-types.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, safeUrl, type Html } from '../../connect/pages/html.js';
import { renderConsolePage } from '../pages/layout.js';
import type { ConsoleContext } from '../context.js';
import type { CallWorkflow } from './call-workflow.js';
import { decisionBadge } from './decision-badge.js';

export interface CallEventView {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  event: AuditEvent;
  /** The approval raised for the call, as the API shows it; null when none was. */
  approval: ApprovalView | null;
  workflow: CallWorkflow | null;
  /** TRACE_URL_TEMPLATE filled in; null without one. */
  traceUrl: string | null;
}

/**
 * The decisions an approval view carries, when it carries them (views recorded before approvals
 * could need several decisions have none). Read field by field: whatever else a decision holds
 * is not shown, and a shape this page does not know shows no decisions rather than a broken page.
 */
const shownDecisions = z.array(
  z.object({
    by: z.string(),
    decision: z.string(),
    at: z.string(),
    via: z.string().optional(),
    name: z.string().optional(),
    issuer: z.string().optional(),
    subject: z.string().optional(),
  }),
);

function decisionsOf(approval: ApprovalView): z.infer<typeof shownDecisions> | null {
  const parsed = shownDecisions.safeParse(Reflect.get(approval, 'decisions'));
  return parsed.success ? parsed.data : null;
}

const none = html`<span class="muted">none</span>`;

/** A time from a view: as a time when it reads as one, else as the text it is. */
function shownTime(text: string): Html | string {
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? text : utcTime(at.toISOString());
}

/** One audit event in full: what `GET /v1/audit/{event_id}` answers, and where to look further. */
export function renderCallEvent(view: CallEventView): string {
  const { context, event } = view;
  const base = context.shown.base;
  return renderConsolePage({
    branding: context.branding,
    title: `${event.action} · Calls`,
    section: 'calls',
    viewer: context.shown,
    body: html`<p><a href="${base}/calls">All calls</a></p>
      <h1>${event.action}</h1>
      <p class="lead">
        ${decisionBadge(event.decision)} ${utcTime(event.time.toISOString())} · agent
        ${event.agentId}${event.userExternalId === null ? '' : html` · user ${event.userExternalId}`}
      </p>
      <section aria-labelledby="event-title">
        <h2 id="event-title">The event</h2>
        <div class="panel">
          <dl class="facts">
            <dt>Event id</dt>
            <dd><code>${event.id}</code></dd>
            <dt>Time</dt>
            <dd>${utcTime(event.time.toISOString())}</dd>
            <dt>Action</dt>
            <dd><code>${event.action}</code></dd>
            <dt>Scope</dt>
            <dd>${event.scope ?? none}</dd>
            <dt>Decision</dt>
            <dd>${decisionBadge(event.decision)}</dd>
            <dt>Reason</dt>
            <dd>${event.reason ?? none}</dd>
            <dt>Agent</dt>
            <dd>${event.agentId}</dd>
            <dt>User</dt>
            <dd>
              ${
                event.userExternalId === null
                  ? none
                  : html`<a href="${base}/connections/${encodeURIComponent(event.userExternalId)}"
                      >${event.userExternalId}</a
                    >`
              }
            </dd>
            <dt>Via</dt>
            <dd>${event.via}</dd>
            <dt>Policy</dt>
            <dd>
              ${
                event.policyId !== null && event.policyVersion !== null
                  ? html`<code>${event.policyId}</code> version ${event.policyVersion}`
                  : none
              }
            </dd>
            ${
              event.grantId !== null &&
              html`<dt>Grant</dt>
                <dd><code>${event.grantId}</code></dd>`
            }
          </dl>
        </div>
      </section>
      ${traced(view)} ${approvalPanel(view.approval)}
      <section aria-labelledby="request-title">
        <h2 id="request-title">Request</h2>
        <div class="panel">${json(event.request)}</div>
      </section>
      <section aria-labelledby="response-title">
        <h2 id="response-title">Response</h2>
        <div class="panel">
          ${
            event.response === null
              ? html`<p class="none">None: the call did not reach the app.</p>`
              : json(event.response)
          }
        </div>
      </section>`,
  });
}

function json(value: unknown): Html {
  return html`<pre><code>${JSON.stringify(value, null, 2)}</code></pre>`;
}

function traced(view: CallEventView): Html {
  const { event, workflow } = view;
  const trace = safeUrl(view.traceUrl);
  const ui = safeUrl(workflow?.uiUrl);
  return html`<section aria-labelledby="trace-title">
    <h2 id="trace-title">Trace and workflow</h2>
    <div class="panel">
      <dl class="facts">
        <dt>Trace</dt>
        <dd>
          <code>${event.traceId}</code>
          ${trace && html` · <a href="${trace}">Open the trace</a>`}
        </dd>
        <dt>Workflow</dt>
        <dd>
          ${
            workflow === null
              ? html`<span class="muted">none: no workflow ran for this event</span>`
              : html`<code>${workflow.workflowId ?? 'not known to Temporal'}</code>
                  ${workflow.runId && html`<br /><span class="muted">run</span> <code>${workflow.runId}</code>`}
                  ${ui && html`<br /><a href="${ui}">Open in the Temporal UI</a>`}`
          }
        </dd>
      </dl>
    </div>
  </section>`;
}

function approvalPanel(approval: ApprovalView | null): Html {
  if (!approval) return html``;
  const decisions = decisionsOf(approval);
  return html`<section aria-labelledby="approval-title">
      <h2 id="approval-title">Approval</h2>
      <div class="panel">
        <dl class="facts">
          <dt>Approval id</dt>
          <dd><code>${approval.id}</code></dd>
          <dt>Status</dt>
          <dd><span class="badge">${approval.status}</span></dd>
          <dt>Asked of</dt>
          <dd>
            ${approval.requested_from.length > 0 ? approval.requested_from.join(', ') : 'anyone who may decide'}
          </dd>
          <dt>Rule</dt>
          <dd>
            ${approval.policy.rule} (<code>${approval.policy.id}</code> version
            ${approval.policy.version})
          </dd>
          <dt>Opened</dt>
          <dd>${utcTime(approval.created_at)}</dd>
          <dt>Expires</dt>
          <dd>${utcTime(approval.expires_at)}</dd>
          <dt>Decided</dt>
          <dd>
            ${
              approval.decided_by === null
                ? none
                : html`${approval.decided_by}${approval.decided_at && html`, ${utcTime(approval.decided_at)}`}`
            }
          </dd>
        </dl>
      </div>
    </section>
    ${decisions && decisionsTable(decisions)}`;
}

function decisionsTable(decisions: z.infer<typeof shownDecisions>): Html {
  return html`<section aria-labelledby="decisions-title">
    <h2 id="decisions-title">Decisions</h2>
    ${
      decisions.length === 0
        ? html`<p class="panel none">No decision yet.</p>`
        : html`<table class="list" aria-label="Decisions, oldest first">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Decision</th>
                <th scope="col">By</th>
                <th scope="col">Via</th>
              </tr>
            </thead>
            <tbody>
              ${decisions.map(
                (decision) =>
                  html`<tr>
                    <td data-label="When">${shownTime(decision.at)}</td>
                    <td data-label="Decision">${decision.decision}</td>
                    <td data-label="By">
                      ${decision.name ? html`${decision.name} (${decision.by})` : decision.by}
                    </td>
                    <td data-label="Via">${decision.via ?? none}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}
