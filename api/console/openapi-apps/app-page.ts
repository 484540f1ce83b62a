import { operationChangesInWords } from '../../../activities/openapi-apps/index.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { OpenApiAppView } from '../../presenters/openapi-apps.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';
import { renderAppSettings } from '../apps/app-settings.js';
import { renderSnapshotAccept } from '../apps/snapshot-accept.js';
import { renderOperationReview } from './operation-review.js';
import type { OpenApiSnapshotReview } from './snapshot-review.js';

export interface OpenApiAppPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  app: OpenApiAppView;
  review: OpenApiSnapshotReview | null;
  /** Whether this person may accept a snapshot (role `govern`). */
  mayAccept: boolean;
  /** The snapshot this person just accepted, to say so. */
  accepted?: number;
}

const version = (value: number | null) => (value === null ? 'none' : `v${String(value)}`);

const CONNECTION_WORDS: Record<OpenApiAppView['connection']['kind'], string> = {
  none: 'Nothing: no operation needs a credential',
  credential: 'A credential each user enters on the hosted connect page',
  oauth2: 'OAuth 2.0: each user connects through the hosted connect flow',
  unservable: 'Not possible: the chosen scheme cannot be served',
};

/**
 * One REST API imported from its OpenAPI document: what it is, its operations with their grades
 * and whether agents may call them, and, when a newer import differs from the accepted snapshot,
 * the review of it with the Accept button, as for a remote MCP app.
 */
export function renderOpenApiAppPage(page: OpenApiAppPage): string {
  const { app, review, viewer } = page;
  const base = `${viewer.base}/apps`;
  return renderConsolePage({
    branding: page.branding,
    title: app.name,
    section: 'apps',
    viewer,
    body: html`
      <p class="muted"><a href="${base}">Apps</a></p>
      <h1>${app.name} <code class="muted">${app.app}</code></h1>
      ${
        page.accepted !== undefined &&
        html`<p class="notice good" role="status">
          Snapshot v${String(page.accepted)} is accepted: agents call its operations as it defines
          them.
        </p>`
      }
      <div class="panel">
        <dl class="facts">
          <dt>Base URL</dt>
          <dd><code>${app.base_url}</code> (pinned)</dd>
          <dt>Document</dt>
          <dd>
            ${app.document_url === null ? 'given inline' : html`<code>${app.document_url}</code>`}${
              app.document && `: ${app.document.title ?? ''} ${app.document.version ?? ''}`
            }
          </dd>
          <dt>Users connect</dt>
          <dd>
            ${CONNECTION_WORDS[app.connection.kind]}${
              app.connection.scheme && html` (scheme <code>${app.connection.scheme}</code>)`
            }
          </dd>
          <dt>Accepted snapshot</dt>
          <dd>${version(app.snapshot.accepted_version)}</dd>
          <dt>Newest import</dt>
          <dd>
            ${version(app.snapshot.latest_version)}${
              app.snapshot.latest_fetched_at &&
              html`, imported ${utcTime(app.snapshot.latest_fetched_at)}`
            }
          </dd>
          ${renderAppSettings({
            noun: 'operation',
            allowlist: app.operation_allowlist,
            gradeOverrides: app.grade_overrides,
          })}
        </dl>
      </div>
      ${
        review
          ? renderReview(page, review)
          : html`<p class="muted">
              Nothing waits for review: the newest import is the accepted one.
            </p>`
      }
      <h2>Operations</h2>
      ${renderOperations(app)}
    `,
  });
}

function renderReview(page: OpenApiAppPage, review: OpenApiSnapshotReview): Html {
  const { viewer } = page;
  return html`<section aria-labelledby="pending">
    <h2 id="pending">Snapshot v${String(review.version)} waits for review</h2>
    <p class="lead">
      Imported ${utcTime(review.fetchedAt)}, against the accepted snapshot
      ${version(review.acceptedVersion)}: ${operationChangesInWords(review.changes)}. Its new and
      changed operations cannot be called until it is accepted.
    </p>
    ${review.operations.map((operation) =>
      renderOperationReview(operation, {
        accepted: review.acceptedVersion,
        pending: review.version,
      }),
    )}
    ${
      review.hinted.length > 0 &&
      html`<div class="notice" role="note">
        <strong>Grades the document gives itself.</strong> Its <code>x-gatehouse-scope</code> grades
        ${review.hinted.join(', ')}. A document's grades are its author's claims: an operation that
        destroys may say it only reads. Accepting takes its word for these grades; to grade one
        yourself first, set a grade override (<code
          >gatehouse apps update ${page.app.app} --grade operation=destructive</code
        >).
      </div>`
    }
    ${renderSnapshotAccept({
      viewer,
      appId: page.app.app,
      version: review.version,
      mayAccept: page.mayAccept,
      what: 'operations',
      newer: 'An import',
    })}
  </section>`;
}

/** The first operations, then how many more: a thousand rows help nobody review. */
const SHOWN_OPERATIONS = 200;

function renderOperations(app: OpenApiAppView): Html {
  if (app.operations.length === 0) return html`<p class="empty">No operations.</p>`;
  const shown = app.operations.slice(0, SHOWN_OPERATIONS);
  const more = app.operations.length - shown.length;
  return html`<p class="muted">
      The accepted snapshot's operations, then the pending snapshot's new
      ones${
        more > 0 &&
        ` (the first ${String(SHOWN_OPERATIONS)} of ${String(app.operations.length)}: \`gatehouse apps show ${app.app}\` lists all)`
      }.
    </p>
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Operation</th>
          <th scope="col">Request</th>
          <th scope="col">Grade</th>
          <th scope="col">Callable</th>
        </tr>
      </thead>
      <tbody>
        ${shown.map(
          (operation) =>
            html`<tr>
              <td data-label="Operation">
                <code>${operation.name}</code>
                ${operation.summary && html`<div class="muted">${operation.summary}</div>`}
              </td>
              <td data-label="Request"><code>${operation.method} ${operation.path}</code></td>
              <td data-label="Grade">
                <strong>${operation.grade}</strong>
                <div class="muted">${GRADE_SOURCE_SHORT[operation.grade_source]}</div>
              </td>
              <td data-label="Callable">
                ${
                  operation.callable
                    ? html`<span class="badge ok">yes</span>`
                    : html`<span class="badge bad">no</span>`
                }
                ${
                  operation.refused_because &&
                  html`<div class="muted">Refused: ${operation.refused_because}.</div>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

const GRADE_SOURCE_SHORT: Record<OpenApiAppView['operations'][number]['grade_source'], string> = {
  override: 'your override',
  extension: 'the document’s',
  method: 'by method',
};
