import { html, type Html } from '../../connect/pages/html.js';
import type { Viewer } from '../pages/layout.js';

/**
 * The Accept button under a pending snapshot's review, for an operator (`govern`); a sentence for
 * anyone else. It posts the version the page showed, so a snapshot made after the page was drawn
 * is not accepted with it. `what`: what agents will call (`tools`, `operations`).
 */
export function renderSnapshotAccept(page: {
  viewer: Viewer;
  appId: string;
  version: number;
  mayAccept: boolean;
  what: string;
  /** What made a newer snapshot: `A listing`, `An import`. */
  newer: string;
}): Html {
  const { viewer, version } = page;
  if (!page.mayAccept) {
    return html`<p class="muted">
      An operator accepts snapshots; your roles let you review them.
    </p>`;
  }
  return html`<form method="post" action="${viewer.base}/apps/${page.appId}/accept" class="panel">
    <input type="hidden" name="csrf" value="${viewer.formToken}" />
    <input type="hidden" name="version" value="${String(version)}" />
    <p>
      Accepting snapshot v${String(version)} makes agents call these ${page.what} as it defines
      them, at the grades shown on its side. ${page.newer} made after this page was drawn is not
      accepted with it.
    </p>
    <button type="submit">Accept snapshot v${String(version)}</button>
  </form>`;
}
