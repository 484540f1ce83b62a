import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { Issue } from '../../errors.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';

/**
 * The candidate's form: the policy as JSON, in the shape `PUT /v1/policies/{id}` takes, sent to
 * the simulation first. Shared by the edit page and the simulation page ("Simulate again").
 */
export function renderCandidateForm(options: {
  viewer: Viewer;
  policyId: string;
  text: string;
  button: string;
  /** Issues to tie to the field, by id. */
  describedBy?: string;
}): Html {
  const { viewer } = options;
  return html`<form method="post" action="${viewer.base}/policies/${options.policyId}/simulate">
    <input type="hidden" name="csrf" value="${viewer.formToken}" />
    <p>
      <label for="candidate"
        ><strong>The policy as JSON</strong>, as
        <code>PUT /v1/policies/${options.policyId}</code> takes it</label
      >
    </p>
    <textarea
      id="candidate"
      name="candidate"
      spellcheck="false"
      autocapitalize="off"
      autocomplete="off"
      ${options.describedBy ? html`aria-describedby="${options.describedBy}"` : ''}
    >
${options.text}</textarea>
    <div class="actions">
      <button type="submit">${options.button}</button>
    </div>
  </form>`;
}

/** Editing a policy: the form, and what was wrong with the last candidate when something was. */
export function renderEditPage(page: {
  branding: ResolvedBranding;
  viewer: Viewer;
  policy: { id: string; name: string; version: number };
  text: string;
  issues: Issue[];
}): string {
  const { policy, viewer, issues } = page;
  return renderConsolePage({
    branding: page.branding,
    title: `Edit policy ${policy.name}`,
    section: 'policies',
    viewer,
    body: html`
      <p class="muted">
        <a href="${viewer.base}/policies">Policies</a> ·
        <a href="${viewer.base}/policies/${policy.id}">${policy.name}</a>
      </p>
      <h1>Edit ${policy.name}</h1>
      <p class="lead">
        Change the policy below and simulate it: the recorded calls are judged by version
        ${String(policy.version)} and by your candidate, and the page shows which would be decided
        differently. Nothing is saved until you save the version you simulated.
      </p>
      ${
        issues.length > 0 &&
        html`<div class="notice" id="issues" role="alert">
          <p><strong>The candidate cannot be saved as it is:</strong></p>
          <ul class="issues">
            ${issues.map((issue) => html`<li><code>${issue.path}</code>: ${issue.message}</li>`)}
          </ul>
        </div>`
      }
      <div class="panel">
        ${renderCandidateForm({
          viewer,
          policyId: policy.id,
          text: page.text,
          button: 'Simulate',
          ...(issues.length > 0 ? { describedBy: 'issues' } : {}),
        })}
      </div>
    `,
  });
}
