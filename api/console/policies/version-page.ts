import { utcTime } from '../../approvals/pages/time.js';
import { html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';
import { lineDiff, renderDiffSide } from '../pages/line-diff.js';
import type { ShownPolicy } from './policy-parts.js';

/**
 * One version of a policy as it was written (what decided the calls whose audit names it), with
 * what it changed from the version before.
 */
export function renderVersionPage(page: {
  branding: ResolvedBranding;
  viewer: Viewer;
  version: ShownPolicy;
  text: string;
  /** The version before it, as text; null for version 1. */
  previous: { version: number; text: string } | null;
}): string {
  const { version, viewer, previous } = page;
  const base = `${viewer.base}/policies/${version.id}`;
  const number = String(version.version);
  const diff = previous ? lineDiff(previous.text, page.text) : null;
  return renderConsolePage({
    branding: page.branding,
    title: `Policy ${version.name}, version ${number}`,
    section: 'policies',
    viewer,
    body: html`
      <p class="muted">
        <a href="${viewer.base}/policies">Policies</a> ·
        <a href="${base}">${version.name}</a>
      </p>
      <h1>Version ${number} of ${version.name}</h1>
      <p class="lead">Written ${utcTime(version.updated_at)} by ${version.updated_by}.</p>
      ${
        previous && diff
          ? html`<h2>What it changed from version ${String(previous.version)}</h2>
              <div class="sbs">
                <div>
                  <p class="side">Version ${String(previous.version)}</p>
                  ${renderDiffSide(diff.before, `Version ${String(previous.version)}`)}
                </div>
                <div>
                  <p class="side">Version ${number}</p>
                  ${renderDiffSide(diff.after, `Version ${number}`)}
                </div>
              </div>`
          : html`<h2>As written</h2>
              <pre>${page.text}</pre>`
      }
    `,
  });
}
