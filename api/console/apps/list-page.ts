import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { McpAppView } from '../../presenters/mcp-apps.js';
import type { OpenApiAppView } from '../../presenters/openapi-apps.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

/**
 * The apps operators registered in the environment (remote MCP servers, and REST APIs imported
 * from their OpenAPI documents), those with a snapshot to review marked.
 */
export function renderAppList(page: {
  branding: ResolvedBranding;
  viewer: Viewer;
  apps: McpAppView[];
  openApiApps: OpenApiAppView[];
}): string {
  const { viewer, apps, openApiApps } = page;
  const waiting = [...apps, ...openApiApps].filter((app) => app.snapshot.pending !== null).length;
  return renderConsolePage({
    branding: page.branding,
    title: 'Apps',
    section: 'apps',
    viewer,
    body: html`
      <h1>Apps</h1>
      <p class="lead">
        Remote MCP servers and REST APIs registered as apps of ${viewer.environment}. A tool or an
        operation is called as the accepted snapshot defines it; when a server lists its tools
        differently, or a document describes its operations differently, the new snapshot waits for
        an operator's review.
        ${waiting > 0 && html`<strong>${String(waiting)} waiting for review.</strong>`}
      </p>
      <h2>Remote MCP servers</h2>
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
      <h2>REST APIs (OpenAPI)</h2>
      ${renderOpenApiApps(viewer, openApiApps)}
    `,
  });
}

function renderOpenApiApps(viewer: Viewer, apps: OpenApiAppView[]): Html {
  if (apps.length === 0) {
    return html`<p class="empty">
      No OpenAPI document is imported here yet (<code>gatehouse apps import</code>, or
      <code>POST /v1/openapi-apps</code>).
    </p>`;
  }
  return html`<table class="list">
    <thead>
      <tr>
        <th scope="col">App</th>
        <th scope="col">Base URL</th>
        <th scope="col">Operations agents may call</th>
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
          <td data-label="Base URL"><code>${app.base_url}</code></td>
          <td data-label="Operations agents may call">
            ${String(app.operations.filter((one) => one.callable).length)} of
            ${String(app.operations.length)}
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
  </table>`;
}
