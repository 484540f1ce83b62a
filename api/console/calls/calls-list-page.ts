import type { AuditEvent } from '../../../activities/db/audit-events.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import { renderConsolePage } from '../pages/layout.js';
import type { ConsoleContext } from '../context.js';
import { callsHref, DECISIONS, type CallsForm } from './call-filters.js';
import { decisionBadge } from './decision-badge.js';
import type { TrailIntegrity } from './trail-integrity.js';

export interface CallsListView {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  integrity: TrailIntegrity;
  form: CallsForm;
  /** What is wrong with the filters; no list is shown then. */
  problems: string[];
  events: AuditEvent[];
  /** The next (older) page's cursor; null on the last page. */
  next: string | null;
  /** Whether this is a later page (a link back to the newest is offered). */
  paged: boolean;
}

/** The environment's audit log, newest first, under the trail's integrity and the filters. */
export function renderCallsList(view: CallsListView): string {
  const { context, form } = view;
  const base = context.shown.base;
  const filtered = Object.keys(form).length > 0;
  return renderConsolePage({
    branding: context.branding,
    title: 'Calls',
    section: 'calls',
    viewer: context.shown,
    body: html`<h1>Calls</h1>
      <p class="lead">
        Every call agents made in this environment, refused ones too, and every change people made
        in the console: newest first.
      </p>
      ${integrityPanel(view.integrity, context.shown)} ${filterForm(form, base)}
      ${
        view.problems.length > 0
          ? html`<div class="notice" role="alert">
              <p><strong>These filters cannot be used:</strong></p>
              <ul>
                ${view.problems.map((problem) => html`<li>${problem}</li>`)}
              </ul>
            </div>`
          : eventsTable(view.events, base, filtered)
      }
      ${pager(view, base)}`,
  });
}

function integrityPanel(integrity: TrailIntegrity, shown: ConsoleContext['shown']): Html {
  const { checkpoint } = integrity;
  const sealed = checkpoint
    ? html`seq ${checkpoint.lastSeq}, sealed ${utcTime(checkpoint.sealedAt.toISOString())}
      (${counted(checkpoint.eventCount, 'event')})`
    : html`None yet. Events are hashed as they are written; a worker with
        <code>AUDIT_SIGNING_KEY</code> seals them into signed checkpoints every minute.`;
  return html`<section aria-labelledby="integrity-title">
    <h2 id="integrity-title">Audit trail integrity</h2>
    <div class="panel">
      <dl class="facts">
        <dt>Last checkpoint</dt>
        <dd>${sealed}</dd>
        <dt>Last 24 hours</dt>
        <dd>${checkResult(integrity)}</dd>
      </dl>
      <form class="actions" method="post" action="${shown.base}/calls/integrity-check">
        <input type="hidden" name="csrf" value="${shown.formToken}" />
        <button class="quiet" type="submit">Check again</button>
      </form>
    </div>
  </section>`;
}

const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

function checkResult({ last, running }: TrailIntegrity): Html {
  const now = running ? html` A new check is running; reload to see it.` : '';
  if (!last)
    return html`<span class="badge">Checking</span> The check is running; reload to see it.`;
  if (last.state === 'failed') {
    return html`<span class="badge bad">Not checked</span> ${last.message} Tried
      ${utcTime(last.ranAt.toISOString())}.${now}`;
  }
  const { report } = last;
  const scope = html`${counted(report.checkpoints, 'checkpoint')} and
  ${counted(report.events, 'event')} since ${utcTime(last.since.toISOString())}, checked
  ${utcTime(last.ranAt.toISOString())}.`;
  if (report.problems.length === 0) {
    return html`<span class="badge ok">Intact</span> ${scope}${now}`;
  }
  return html`<span class="badge bad">Does not verify</span> ${scope}${now}
    <ul>
      ${report.problems.map((problem) => html`<li>${problem}</li>`)}
    </ul>
    <span class="muted"
      >Run <code>gatehouse audit verify --env …</code> for every problem over the whole trail.</span
    >`;
}

function filterForm(form: CallsForm, base: string): Html {
  const field = (name: keyof CallsForm, label: string, type = 'text') =>
    html`<label
      >${label}
      <input
        type="${type}"
        name="${name}"
        value="${form[name] ?? ''}"
        ${type === 'datetime-local' ? html`step="1"` : ''}
    /></label>`;
  return html`<form class="filters" method="get" action="${base}/calls" aria-label="Filter calls">
    ${field('agent', 'Agent')} ${field('user', 'User')} ${field('action', 'Action')}
    <label
      >Decision
      <select name="decision">
        <option value="">Any</option>
        ${DECISIONS.map(
          (decision) =>
            html`<option value="${decision}" ${form.decision === decision ? html`selected` : ''}>
              ${decision}
            </option>`,
        )}
      </select></label
    >
    ${field('since', 'Since (UTC)', 'datetime-local')}
    ${field('until', 'Until (UTC)', 'datetime-local')}
    <button type="submit">Filter</button>
    <a class="button quiet" href="${base}/calls">Clear</a>
  </form>`;
}

function eventsTable(events: AuditEvent[], base: string, filtered: boolean): Html {
  if (events.length === 0) {
    return html`<p class="panel empty">
      ${filtered ? 'No calls match these filters.' : 'No calls yet.'}
    </p>`;
  }
  return html`<table class="list" aria-label="Calls, newest first">
    <thead>
      <tr>
        <th scope="col">Time</th>
        <th scope="col">Action</th>
        <th scope="col">Decision</th>
        <th scope="col">Agent</th>
        <th scope="col">User</th>
        <th scope="col">Via</th>
      </tr>
    </thead>
    <tbody>
      ${events.map(
        (event) =>
          html`<tr>
            <td data-label="Time">
              <a href="${base}/calls/${event.id}">${utcTime(event.time.toISOString())}</a>
            </td>
            <td data-label="Action"><code>${event.action}</code></td>
            <td data-label="Decision">${decisionBadge(event.decision)}</td>
            <td data-label="Agent">${event.agentId}</td>
            <td data-label="User">
              ${event.userExternalId ?? html`<span class="muted">none</span>`}
            </td>
            <td data-label="Via">${event.via}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function pager(view: CallsListView, base: string): Html {
  if (!view.next && !view.paged) return html``;
  return html`<nav class="pager actions" aria-label="Pages">
    ${view.paged ? html`<a class="button quiet" href="${callsHref(base, view.form)}">Newest</a>` : ''}
    ${view.next ? html`<a class="button quiet" href="${callsHref(base, view.form, view.next)}">Older calls</a>` : ''}
  </nav>`;
}
