import type { StoredPolicy } from '../../../activities/db/policies.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

/** The environment's policies, each with the agents it governs and its current version. */
export function renderPolicyList(page: {
  branding: ResolvedBranding;
  viewer: Viewer;
  policies: StoredPolicy[];
}): string {
  const { viewer, policies } = page;
  return renderConsolePage({
    branding: page.branding,
    title: 'Policies',
    section: 'policies',
    viewer,
    body: html`
      <h1>Policies</h1>
      <p class="lead">
        What the agents of ${viewer.environment} may do: each call is allowed, held for a person's
        approval, or denied by the policy that governs its agent. Approvers may add
        <a href="${viewer.base}/grants">grants</a> that let an action through for a while.
      </p>
      ${
        policies.length === 0
          ? html`<p class="empty">No policy yet.</p>`
          : html`<table class="list">
              <thead>
                <tr>
                  <th scope="col">Policy</th>
                  <th scope="col">Agents governed</th>
                  <th scope="col">Version</th>
                  <th scope="col">Written</th>
                </tr>
              </thead>
              <tbody>
                ${policies.map(
                  (policy) =>
                    html`<tr>
                      <td data-label="Policy">
                        <a href="${viewer.base}/policies/${policy.id}">${policy.name}</a>
                        <code class="muted">${policy.id}</code>
                      </td>
                      <td data-label="Agents governed">
                        ${policy.agents.length === 0 ? 'none' : policy.agents.join(', ')}
                      </td>
                      <td data-label="Version">${String(policy.version)}</td>
                      <td data-label="Written">
                        ${utcTime(policy.updatedAt.toISOString())} by ${policy.updatedBy}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      <p class="pager"><a href="${viewer.base}/grants">Grants</a></p>
    `,
  });
}
