import type { ConnectedUserSummary } from '../../../activities/db/connected-users.js';
import type { Connection } from '../../../activities/db/connections.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import { renderConsolePage } from '../pages/layout.js';
import type { ConsoleContext } from '../context.js';
import { statusBadge, timeOrNever, userHref } from './connection-status.js';

export interface ConnectionsListView {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  /** The user filter as typed. */
  user: string;
  problem: string | null;
  users: { user: ConnectedUserSummary; connections: Connection[] }[];
  /** The next page's cursor; null on the last page. */
  next: string | null;
  paged: boolean;
}

/** The environment's users, newest first, each with every connection they have had. */
export function renderConnectionsList(view: ConnectionsListView): string {
  const { context } = view;
  const base = context.shown.base;
  return renderConsolePage({
    branding: context.branding,
    title: 'Connections',
    section: 'connections',
    viewer: context.shown,
    body: html`<h1>Connections</h1>
      <p class="lead">
        The users of this environment and their connections to apps, newest user first. Revoked
        connections stay listed as history. Find a user by your exact id for them.
      </p>
      <form
        class="filters"
        method="get"
        action="${base}/connections"
        aria-label="Filter connections"
      >
        <label>User <input type="text" name="user" value="${view.user}" /></label>
        <button type="submit">Filter</button>
        <a class="button quiet" href="${base}/connections">Clear</a>
      </form>
      ${
        view.problem !== null
          ? html`<div class="notice" role="alert">${view.problem}</div>`
          : usersTable(view, base)
      }
      ${pager(view, base)}`,
  });
}

function usersTable(view: ConnectionsListView, base: string): Html {
  if (view.users.length === 0) {
    return html`<p class="panel empty">
      ${view.user ? html`No user “${view.user}” in this environment.` : 'No users yet.'}
    </p>`;
  }
  return html`<table class="list" aria-label="Users and their connections">
    <thead>
      <tr>
        <th scope="col">User</th>
        <th scope="col">App</th>
        <th scope="col">Status</th>
        <th scope="col">Last refresh</th>
        <th scope="col">Created</th>
      </tr>
    </thead>
    <tbody>
      ${view.users.map(({ user, connections }) => {
        const who = html`<td data-label="User">
          <a href="${userHref(base, user.externalId)}">${user.externalId}</a>
          ${user.customer !== null && html`<br /><span class="muted">${user.customer}</span>`}
        </td>`;
        if (connections.length === 0) {
          return html`<tr>
            ${who}
            <td data-label="App" colspan="4"><span class="muted">No connection</span></td>
          </tr>`;
        }
        return connections.map(
          (connection) =>
            html`<tr>
              ${who}
              <td data-label="App">${connection.app}</td>
              <td data-label="Status">${statusBadge(connection.status)}</td>
              <td data-label="Last refresh">${timeOrNever(connection.lastRefreshedAt)}</td>
              <td data-label="Created">${utcTime(connection.createdAt.toISOString())}</td>
            </tr>`,
        );
      })}
    </tbody>
  </table>`;
}

function pager(view: ConnectionsListView, base: string): Html {
  if (!view.next && !view.paged) return html``;
  return html`<nav class="pager actions" aria-label="Pages">
    ${view.paged && html`<a class="button quiet" href="${base}/connections">Newest</a>`}
    ${
      view.next &&
      html`<a
        class="button quiet"
        href="${base}/connections?cursor=${encodeURIComponent(view.next)}"
        >Older users</a
      >`
    }
  </nav>`;
}
