import type { GrantStatus, GrantView } from '../../../workflows/grant-types.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

export const GRANT_STATUSES = ['active', 'expired', 'revoked'] as const;

export interface GrantsPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  grants: GrantView[];
  /** The status shown; undefined: all. */
  status: GrantStatus | undefined;
  /** The next page's address, when more follow. */
  next: string | null;
  /** Whether this person may revoke (role `govern`). */
  mayRevoke: boolean;
  /** A grant this person just revoked, to say so. */
  revoked?: string;
  /** The filter could not be read. */
  unreadable?: boolean;
}

/**
 * Grants: each lets one agent's action through without asking, for a user or for any user,
 * until it ends. Listed newest first, with Revoke on the live ones.
 */
export function renderGrantsPage(page: GrantsPage): string {
  const { viewer, grants } = page;
  return renderConsolePage({
    branding: page.branding,
    title: 'Grants',
    section: 'policies',
    viewer,
    body: html`
      <p class="muted"><a href="${viewer.base}/policies">Policies</a></p>
      <h1>Grants</h1>
      <p class="lead">
        An approver may add a grant to an approval: the same action of the same agent is then
        allowed without asking, for the call's user or for any user, until the grant ends. Revoking
        one makes the next call be judged by the policy alone.
      </p>
      ${
        page.revoked &&
        html`<p class="notice good" role="status">
          The grant is revoked: the next call it would have let through is judged by the policy.
        </p>`
      }
      ${
        page.unreadable &&
        html`<p class="notice" role="alert">That filter could not be read; showing all grants.</p>`
      }
      <form method="get" action="${viewer.base}/grants" class="filters">
        <label
          >Status
          <select name="status">
            <option value="" ${page.status === undefined ? 'selected' : ''}>any</option>
            ${GRANT_STATUSES.map(
              (status) =>
                html`<option value="${status}" ${page.status === status ? 'selected' : ''}>
                  ${status}
                </option>`,
            )}
          </select>
        </label>
        <button class="quiet" type="submit">Show</button>
      </form>
      ${
        grants.length === 0
          ? html`<p class="empty">No grants${page.status ? ` ${page.status}` : ''}.</p>`
          : html`<table class="list">
              <thead>
                <tr>
                  <th scope="col">Agent and action</th>
                  <th scope="col">For</th>
                  <th scope="col">Granted</th>
                  <th scope="col">Until</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                ${grants.map(
                  (grant) =>
                    html`<tr>
                      <td data-label="Agent and action">
                        ${grant.agent_id}: <code>${grant.action}</code> (${grant.scope})
                      </td>
                      <td data-label="For">${grant.user ?? 'any user'}</td>
                      <td data-label="Granted">
                        ${utcTime(grant.created_at)} by ${grant.created_by}
                      </td>
                      <td data-label="Until">${utcTime(grant.expires_at)}</td>
                      <td data-label="Status">
                        <span class="badge ${grant.status === 'active' ? 'ok' : ''}"
                          >${grant.status}</span
                        >
                        ${
                          grant.revoked_at &&
                          html`<div class="muted">
                            ${utcTime(grant.revoked_at)} by ${grant.revoked_by ?? ''}
                          </div>`
                        }
                        ${
                          page.mayRevoke &&
                          grant.status === 'active' &&
                          html`<form
                            method="post"
                            action="${viewer.base}/grants/${grant.id}/revoke"
                          >
                            <input type="hidden" name="csrf" value="${viewer.formToken}" />
                            <button
                              class="danger"
                              type="submit"
                              aria-label="Revoke the grant of ${grant.action} to ${grant.agent_id}"
                            >
                              Revoke
                            </button>
                          </form>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
      }
      ${page.next && html`<p class="pager"><a href="${page.next}">Older grants</a></p>`}
    `,
  });
}
