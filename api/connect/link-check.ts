import { findConnectionById } from '../../activities/db/connections.js';
import { findLinkByToken, type ConnectLink } from '../../activities/db/connect-links.js';
import { getConnectSettings } from '../../activities/db/connect-settings.js';
import type { Db } from '../../infra/database/client.js';
import type { FlowProblem } from './flow-errors.js';
import { linkApp, type LinkApp } from './link-app.js';
import { DEFAULT_BRANDING, type ConnectBranding } from './pages/index.js';

/** The environment's connect settings as page branding (defaults fill what is unset). */
export async function brandingOf(sql: Db, environmentId: string): Promise<ConnectBranding> {
  const settings = await getConnectSettings(sql, environmentId);
  return { ...settings, theme: { ...DEFAULT_BRANDING.theme, ...settings.theme } };
}

export type LinkCheck =
  | { link: ConnectLink; app: LinkApp; branding: ConnectBranding }
  | { problem: FlowProblem; branding: ConnectBranding; app?: LinkApp };

/** A link that can still be used, or the problem that stops it. */
export async function checkLink(sql: Db, token: string): Promise<LinkCheck> {
  const link = /^[A-Za-z0-9_-]{20,64}$/.test(token) ? await findLinkByToken(sql, token) : null;
  if (!link) return { problem: 'link_invalid', branding: DEFAULT_BRANDING };
  const branding = await brandingOf(sql, link.environmentId);
  const app = await linkApp(sql, link.environmentId, link.app);
  if (!app) return { problem: 'link_invalid', branding };
  if (link.usedAt) return { problem: 'link_used', branding, app };
  if (link.expiresAt < new Date()) return { problem: 'link_expired', branding, app };
  if (link.connectionId) {
    const connection = await findConnectionById(sql, link.connectionId);
    if (!connection || connection.status === 'revoked') {
      return { problem: 'connection_revoked', branding, app };
    }
  }
  return { link, app, branding };
}
