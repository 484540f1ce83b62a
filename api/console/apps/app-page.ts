import { changesInWords } from '../../../workflows/catalog/mcp-tool-changes.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { McpAppView } from '../../presenters/mcp-apps.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';
import { renderAppSettings } from './app-settings.js';
import { renderSnapshotAccept } from './snapshot-accept.js';
import { renderToolReview } from './tool-review.js';
import type { SnapshotReview } from './snapshot-review.js';

export interface AppPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  app: McpAppView;
  review: SnapshotReview | null;
  /** Whether this person may accept a snapshot (role `govern`). */
  mayAccept: boolean;
  /** The snapshot this person just accepted, to say so. */
  accepted?: number;
}

const version = (value: number | null) => (value === null ? 'none' : `v${String(value)}`);

/**
 * One remote MCP app: what it is, its tools with their grades and whether agents may call them,
 * and, when the server's newest listing differs from the accepted snapshot, the review of that
 * listing with the Accept button: the page exists for that review.
 */
export function renderAppPage(page: AppPage): string {
  const { app, review, viewer } = page;
  const base = `${viewer.base}/apps`;
  return renderConsolePage({
    branding: page.branding,
    title: app.name,
    section: 'apps',
    viewer,
    body: html`
      <p class="muted"><a href="${base}">Remote MCP apps</a></p>
      <h1>${app.name} <code class="muted">${app.app}</code></h1>
      ${
        page.accepted !== undefined &&
        html`<p class="notice good" role="status">
          Snapshot v${String(page.accepted)} is accepted: agents call its tools as it defines them.
        </p>`
      }
      <div class="panel">
        <dl class="facts">
          <dt>Server</dt>
          <dd><code>${app.server_url}</code></dd>
          <dt>Authorization</dt>
          <dd>
            ${
              app.auth === 'oauth'
                ? 'OAuth: each user connects through the hosted connect flow'
                : 'None: every user may call its tools without connecting'
            }
          </dd>
          <dt>Accepted snapshot</dt>
          <dd>${version(app.snapshot.accepted_version)}</dd>
          <dt>Newest listing</dt>
          <dd>
            ${version(app.snapshot.latest_version)}${
              app.snapshot.checked_at && html`, last listed ${utcTime(app.snapshot.checked_at)}`
            }
          </dd>
          ${renderAppSettings({
            noun: 'tool',
            allowlist: app.tool_allowlist,
            gradeOverrides: app.grade_overrides,
          })}
        </dl>
      </div>
      ${review ? renderReview(page, review) : html`<p class="muted">Nothing waits for review: the server lists the accepted tools.</p>`}
      <h2>Tools</h2>
      ${renderTools(app)}
    `,
  });
}

function renderReview(page: AppPage, review: SnapshotReview): Html {
  const { viewer } = page;
  return html`<section aria-labelledby="pending">
    <h2 id="pending">Snapshot v${String(review.version)} waits for review</h2>
    <p class="lead">
      Listed ${utcTime(review.fetchedAt)}, against the accepted snapshot
      ${version(review.acceptedVersion)}: ${changesInWords(review.changes)}. Its new and changed
      tools cannot be called until it is accepted.
    </p>
    ${review.tools.map((tool) =>
      renderToolReview(tool, { accepted: review.acceptedVersion, pending: review.version }),
    )}
    ${
      review.hinted.length > 0 &&
      html`<div class="notice" role="note">
        <strong>Grades the server gives itself.</strong> Its own annotations grade
        ${review.hinted.join(', ')}. A server's hints are its claims: a tool that destroys may say
        it only reads. Accepting takes its word for these grades; to grade a tool yourself first,
        set a grade override (<code
          >gatehouse apps update ${page.app.app} --grade tool=destructive</code
        >).
      </div>`
    }
    ${renderSnapshotAccept({
      viewer,
      appId: page.app.app,
      version: review.version,
      mayAccept: page.mayAccept,
      what: 'tools',
      newer: 'A listing',
    })}
  </section>`;
}

function renderTools(app: McpAppView): Html {
  if (app.tools.length === 0) {
    return html`<p class="empty">
      No tools
      yet${app.auth === 'oauth' ? ': the server lists them once a user has connected and the app is refreshed' : ''}.
    </p>`;
  }
  return html`<p class="muted">
      The accepted snapshot's tools, then the pending snapshot's new ones.
    </p>
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Grade</th>
          <th scope="col">Callable</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        ${app.tools.map(
          (tool) =>
            html`<tr>
              <td data-label="Tool"><code>${tool.name}</code></td>
              <td data-label="Grade">
                <strong>${tool.grade}</strong>
                <div class="muted">${SOURCE_SHORT[tool.grade_source]}</div>
              </td>
              <td data-label="Callable">
                ${
                  tool.callable
                    ? html`<span class="badge ok">yes</span>`
                    : html`<span class="badge bad">no</span>`
                }
              </td>
              <td data-label="Description">
                ${tool.description ?? tool.title ?? ''}
                ${
                  tool.refused_because &&
                  html`<div class="muted">Refused: ${tool.refused_because}.</div>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

/** Where a grade comes from, in a table cell. */
const SOURCE_SHORT: Record<McpAppView['tools'][number]['grade_source'], string> = {
  override: 'your override',
  annotations: 'server’s annotations',
  default: 'default',
};
