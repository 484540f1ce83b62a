import type { ApprovalView } from '../../../workflows/call-types.js';
import { html, type Html } from '../../connect/pages/html.js';
import { utcTime } from '../../approvals/pages/time.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

export interface InboxFiltersShown {
  agent?: string | undefined;
  user?: string | undefined;
  app?: string | undefined;
  action?: string | undefined;
}

export interface InboxRow {
  approval: ApprovalView;
  /** What this person has done about it already, if anything. */
  mine: 'approve' | 'reject' | null;
}

function tally(approval: ApprovalView): string {
  const quorum = approval.quorum ?? 1;
  const approvals = (approval.decisions ?? []).filter((d) => d.decision === 'approve').length;
  return quorum === 1 ? 'one approval' : `${String(approvals)} of ${String(quorum)} approvals`;
}

function filterForm(base: string, filters: InboxFiltersShown): Html {
  const input = (name: keyof InboxFiltersShown, label: string) =>
    html`<label
      >${label}<input name="${name}" value="${filters[name] ?? ''}" autocomplete="off"
    /></label>`;
  return html`<form class="filters" method="get" action="${base}/inbox" role="search">
    ${input('agent', 'Agent')} ${input('user', 'User')} ${input('app', 'App')}
    ${input('action', 'Action')}
    <button class="quiet" type="submit">Filter</button>
    <a href="${base}/inbox">Clear</a>
  </form>`;
}

/** The approvals waiting for this person, newest first. */
export function renderInbox(options: {
  branding: ResolvedBranding;
  viewer: Viewer;
  rows: InboxRow[];
  filters: InboxFiltersShown;
  next: string | null;
  problem?: string;
}): string {
  const { viewer, rows } = options;
  const base = viewer.base;
  const table =
    rows.length === 0
      ? html`<p class="empty panel">Nothing waits for you here.</p>`
      : html`<table class="list">
          <caption class="skip">
            Approvals waiting for a decision
          </caption>
          <thead>
            <tr>
              <th scope="col">Action</th>
              <th scope="col">Agent</th>
              <th scope="col">User</th>
              <th scope="col">Asked</th>
              <th scope="col">Expires</th>
              <th scope="col">Needs</th>
            </tr>
          </thead>
          <tbody>
            ${rows.map(
              ({ approval, mine }) =>
                html`<tr>
                  <td data-label="Action">
                    <a href="${base}/inbox/${approval.id}"><code>${approval.action}</code></a>
                    <span class="badge ${approval.scope === 'destructive' ? 'bad' : ''}"
                      >${approval.scope}</span
                    >
                  </td>
                  <td data-label="Agent">${approval.agent_id}</td>
                  <td data-label="User">${approval.user}</td>
                  <td data-label="Asked">${utcTime(approval.created_at)}</td>
                  <td data-label="Expires">${utcTime(approval.expires_at)}</td>
                  <td data-label="Needs">
                    ${tally(approval)}
                    ${
                      mine &&
                      html`<span class="badge ok"
                        >you ${mine === 'approve' ? 'approved' : 'rejected'}</span
                      >`
                    }
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>`;
  return renderConsolePage({
    branding: options.branding,
    title: 'Inbox',
    section: 'inbox',
    viewer,
    body: html`<h1>Inbox</h1>
      <p class="lead">Held calls that ask you, or any approver, for a decision. Newest first.</p>
      ${options.problem && html`<p class="notice" role="alert">${options.problem}</p>`}
      ${filterForm(base, options.filters)} ${table}
      ${
        options.next &&
        html`<p class="pager">
          <a
            href="${base}/inbox?${new URLSearchParams({
              ...Object.fromEntries(
                Object.entries(options.filters).filter(
                  (entry): entry is [string, string] => entry[1] !== undefined,
                ),
              ),
              cursor: options.next,
            }).toString()}"
            >Older approvals</a
          >
        </p>`
      }`,
  });
}
