import type { ConnectedUserSummary } from '../../../activities/db/connected-users.js';
import type { Connection } from '../../../activities/db/connections.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import { renderConsolePage } from '../pages/layout.js';
import type { ConsoleContext } from '../context.js';
import { statusBadge, timeOrNever, userHref } from './connection-status.js';

export interface UserConnectionsView {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  user: ConnectedUserSummary;
  connections: Connection[];
  /** Whether the viewer may revoke and make links (role `govern`). */
  mayGovern: boolean;
  /** What the last action did, said once after it. */
  notice: { good: boolean; text: string } | null;
}

/** One user: who they are, their connections, and (for operators) what can be done to them. */
export function renderUserConnections(view: UserConnectionsView): string {
  const { context, user } = view;
  const base = context.shown.base;
  const calls = `${base}/calls?user=${encodeURIComponent(user.externalId)}`;
  return renderConsolePage({
    branding: context.branding,
    title: `${user.externalId} · Connections`,
    section: 'connections',
    viewer: context.shown,
    body: html`<p><a href="${base}/connections">All connections</a></p>
      <h1>User ${user.externalId}</h1>
      <p class="lead">Your own id for this user, as every call names them.</p>
      ${
        view.notice &&
        html`<div class="${view.notice.good ? 'notice good' : 'notice'}" role="status">
          ${view.notice.text}
        </div>`
      }
      <section aria-labelledby="user-title">
        <h2 id="user-title">The user</h2>
        <div class="panel">
          <dl class="facts">
            <dt>Customer</dt>
            <dd>${user.customer ?? html`<span class="muted">none</span>`}</dd>
            <dt>First seen</dt>
            <dd>${utcTime(user.createdAt.toISOString())}</dd>
            <dt>Calls in 7 days</dt>
            <dd>${user.calls7d} · <a href="${calls}">Their calls</a></dd>
            <dt>Last active</dt>
            <dd>${timeOrNever(user.lastActiveAt)}</dd>
          </dl>
        </div>
      </section>
      <h2 id="connections-title">Connections</h2>
      ${connectionsTable(view, base)}`,
  });
}

function connectionsTable(view: UserConnectionsView, base: string): Html {
  if (view.connections.length === 0) {
    return html`<p class="panel empty">No connection yet.</p>`;
  }
  const here = userHref(base, view.user.externalId);
  const { formToken } = view.context.shown;
  return html`<table class="list" aria-labelledby="connections-title">
    <thead>
      <tr>
        <th scope="col">App</th>
        <th scope="col">Status</th>
        <th scope="col">Scopes</th>
        <th scope="col">Last refresh</th>
        <th scope="col">Last used</th>
        <th scope="col">Created</th>
        ${view.mayGovern && html`<th scope="col">Actions</th>`}
      </tr>
    </thead>
    <tbody>
      ${view.connections.map(
        (connection) =>
          html`<tr>
            <td data-label="App">${connection.app}</td>
            <td data-label="Status">${statusBadge(connection.status)}</td>
            <td data-label="Scopes">
              ${connection.grantedScopes.length > 0 ? connection.grantedScopes.join(', ') : '—'}
            </td>
            <td data-label="Last refresh">${timeOrNever(connection.lastRefreshedAt)}</td>
            <td data-label="Last used">${timeOrNever(connection.lastUsedAt)}</td>
            <td data-label="Created">${utcTime(connection.createdAt.toISOString())}</td>
            ${
              view.mayGovern &&
              html`<td data-label="Actions">
                <div class="actions">
                  ${
                    connection.status !== 'revoked' &&
                    html`<a
                      class="button quiet"
                      href="${here}/${connection.id}/revoke"
                      aria-label="Revoke the connection to ${connection.app}"
                      >Revoke…</a
                    >`
                  }
                  <form method="post" action="${here}/${connection.id}/reconnect-link">
                    <input type="hidden" name="csrf" value="${formToken}" />
                    <button
                      class="quiet"
                      type="submit"
                      aria-label="Make a reconnect link for ${connection.app}"
                    >
                      Reconnect link
                    </button>
                  </form>
                </div>
              </td>`
            }
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The revoke's confirmation: revoking ends the user's access through Gatehouse at once. */
export function renderRevokeConfirmation(view: {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  user: ConnectedUserSummary;
  connection: Connection;
}): string {
  const { context, user, connection } = view;
  const here = userHref(context.shown.base, user.externalId);
  return renderConsolePage({
    branding: context.branding,
    title: `Revoke ${connection.app} · Connections`,
    section: 'connections',
    viewer: context.shown,
    body: html`<div class="panel">
      <h1>Revoke ${user.externalId}’s connection to ${connection.app}?</h1>
      <p class="lead">
        Its tokens are revoked at the app, where the app offers it, and erased here. Calls for this
        user to ${connection.app} fail until they connect again through a new link.
      </p>
      <form class="actions" method="post" action="${here}/${connection.id}/revoke">
        <input type="hidden" name="csrf" value="${context.shown.formToken}" />
        <button class="danger" type="submit">Revoke the connection</button>
        <a class="button quiet" href="${here}">Cancel</a>
      </form>
    </div>`,
  });
}

/** The link the operator asked for, to send to the user; shown once, never stored in a page URL. */
export function renderReconnectLink(view: {
  context: Pick<ConsoleContext, 'branding' | 'shown'>;
  user: ConnectedUserSummary;
  app: string;
  link: { url: string; expires_at: string };
}): string {
  const { context, user, app, link } = view;
  return renderConsolePage({
    branding: context.branding,
    title: `Reconnect link · Connections`,
    section: 'connections',
    viewer: context.shown,
    body: html`<div class="panel">
      <h1>A link for ${user.externalId} to connect ${app}</h1>
      <p class="lead">
        Send it to the user yourself. It works once, until
        ${utcTime(new Date(link.expires_at).toISOString())}; it is not shown again.
      </p>
      <h2>Connect link</h2>
      <p class="line"><code>${link.url}</code></p>
      <p class="actions">
        <a class="button quiet" href="${userHref(context.shown.base, user.externalId)}"
          >Back to ${user.externalId}</a
        >
      </p>
    </div>`,
  });
}
