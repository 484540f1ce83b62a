import type { ConnectionStatus } from '../../../activities/db/connections.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';

const tone: Record<ConnectionStatus, string> = {
  active: 'badge ok',
  expired: 'badge bad',
  revoked: 'badge',
};

/** A connection's status as a word in a badge; the colour only repeats the word. */
export function statusBadge(status: ConnectionStatus): Html {
  return html`<span class="${tone[status]}">${status}</span>`;
}

/** A time a connection may not have yet (never refreshed, never used). */
export function timeOrNever(at: Date | null): Html {
  return at === null ? html`<span class="muted">never</span>` : utcTime(at.toISOString());
}

/** A user's page in the console: their external id, escaped for the path. */
export function userHref(base: string, externalId: string): string {
  return `${base}/connections/${encodeURIComponent(externalId)}`;
}
