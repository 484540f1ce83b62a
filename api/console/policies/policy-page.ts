import { utcTime } from '../../approvals/pages/time.js';
import { html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';
import { renderApproval, renderDefaults, renderRules, type ShownPolicy } from './policy-parts.js';

export interface PolicyPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  policy: ShownPolicy;
  /** A page of its versions, newest first. */
  versions: ShownPolicy[];
  /** The version to show the next page from, when more follow. */
  olderThan: number | null;
  /** Whether this person may edit it (role `govern`). */
  mayEdit: boolean;
  /** The version this person just saved, to say so. */
  saved?: number;
}

/** One policy: its current version in full, and every version written, by whom and when. */
export function renderPolicyPage(page: PolicyPage): string {
  const { policy, viewer } = page;
  const base = `${viewer.base}/policies/${policy.id}`;
  return renderConsolePage({
    branding: page.branding,
    title: `Policy ${policy.name}`,
    section: 'policies',
    viewer,
    body: html`
      <p class="muted"><a href="${viewer.base}/policies">Policies</a></p>
      <h1>${policy.name} <code class="muted">${policy.id}</code></h1>
      ${
        page.saved !== undefined &&
        html`<p class="notice good" role="status">
          Version ${String(page.saved)} is saved: it governs calls from now on.
        </p>`
      }
      <div class="panel">
        <dl class="facts">
          <dt>Version</dt>
          <dd>${String(policy.version)}</dd>
          <dt>Agents governed</dt>
          <dd>${policy.agents.length === 0 ? 'none' : policy.agents.join(', ')}</dd>
          <dt>Written</dt>
          <dd>${utcTime(policy.updated_at)} by ${policy.updated_by}</dd>
        </dl>
        ${
          page.mayEdit &&
          html`<div class="actions">
            <a class="button" href="${base}/edit">Edit and simulate</a>
          </div>`
        }
      </div>
      <h2>Defaults</h2>
      <div class="panel">${renderDefaults(policy)}</div>
      <h2>Rules</h2>
      ${renderRules(policy)}
      <h2>Approvals</h2>
      <div class="panel">${renderApproval(policy)}</div>
      <h2 id="versions">Versions</h2>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Written</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          ${page.versions.map(
            (version) =>
              html`<tr>
                <td data-label="Version">
                  <a href="${base}/versions/${String(version.version)}"
                    >Version ${String(version.version)}</a
                  >
                </td>
                <td data-label="Written">${utcTime(version.updated_at)}</td>
                <td data-label="By">${version.updated_by}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${
        page.olderThan !== null &&
        html`<p class="pager">
          <a href="${base}?before=${String(page.olderThan)}#versions">Older versions</a>
        </p>`
      }
    `,
  });
}
