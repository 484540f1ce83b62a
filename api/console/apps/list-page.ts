import { html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { McpAppView } from '../../presenters/mcp-apps.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

/** The environment's remote MCP apps, those with a snapshot to review marked. */
export function renderAppList(page: {
  branding: ResolvedBranding;
  viewer: Viewer;
  apps: McpAppView[];
}): string {
  const { viewer, apps } = page;
  const waiting = apps.filter((app) => app.snapshot.pending !== null).length;
  return renderConsolePage({
    branding: page.branding,
    title: 'Remote MCP apps',
    section: 'apps',
    viewer,
    body: html`
      <h1>Remote MCP apps</h1>
      <p class="lead">
        MCP servers registered as apps of ${viewer.environment}. A tool is called as the accepted
        snapshot defines it; when a server lists its tools differently, the new listing waits for an
        operator's review.
        ${waiting > 0 && html`<strong>${String(waiting)} waiting for review.</strong>`}
      </p>
      ${
        apps.length === 0
          ? html`<p class="empty">
              No remote MCP server is registered here yet (<code>gatehouse apps register</code>, or
              <code>POST /v1/mcp-apps</code>).
            </p>`
          : html`<table class="list">
              <thead>
                <tr>
                  <th scope="col">App</th>
                  <th scope="col">Server</th>
                  <th scope="col">Tools agents may call</th>
                  <th scope="col">Snapshot</th>
                </tr>
              </thead>
              <tbody>
                ${apps.map((app) => {
                  const pending = app.snapshot.pending;
                  const accepted = app.snapshot.accepted_version;
                  return html`<tr>
                    <td data-label="App">
                      <a href="${viewer.base}/apps/${app.app}">${app.name}</a>
                      <code class="muted">${app.app}</code>
                    </td>
                    <td data-label="Server"><code>${app.server_url}</code></td>
                    <td data-label="Tools agents may call">
                      ${String(app.tools.filter((tool) => tool.callable).length)} of
                      ${String(app.tools.length)}
                    </td>
                    <td data-label="Snapshot">
                      ${accepted === null ? 'none accepted' : `v${String(accepted)} accepted`}
                      ${
                        pending &&
                        html`<a class="badge bad" href="${viewer.base}/apps/${app.app}#pending"
                          >v${String(pending.version)} to review</a
                        >`
                      }
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>`
      }
    `,
  });
}
