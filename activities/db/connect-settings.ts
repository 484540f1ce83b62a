import type { Db } from '../../infra/database/client.js';

export type ThemeMode = 'light' | 'dark' | 'system';

export interface ConnectSettings {
  displayName: string;
  accentColor: string;
  logoUrl: string | null;
  supportUrl: string | null;
  /** `radius` is the corner radius in px of the connect pages' buttons and cards. */
  theme: { mode: ThemeMode; radius?: number };
  updatedAt: Date | null;
  updatedBy: string | null;
}

/** The connect pages' own default radius (api/connect/pages/types.ts), for rows that lack one. */
export const DEFAULT_THEME_RADIUS = 10;

export const DEFAULT_CONNECT_SETTINGS: ConnectSettings = {
  displayName: 'Gatehouse',
  accentColor: '#4f46e5',
  logoUrl: null,
  supportUrl: null,
  theme: { mode: 'system', radius: DEFAULT_THEME_RADIUS },
  updatedAt: null,
  updatedBy: null,
};

/**
 * Rows saved before the radius was settable through the API have a theme without it; every
 * reader gets a complete theme instead of guessing the default itself.
 */
function complete(row: ConnectSettings): ConnectSettings {
  return { ...row, theme: { radius: DEFAULT_THEME_RADIUS, ...row.theme } };
}

/** The branding of an environment's connect pages; sensible defaults until someone sets it. */
export async function getConnectSettings(sql: Db, environmentId: string): Promise<ConnectSettings> {
  const [row]: [ConnectSettings?] = await sql`
    select display_name, accent_color, logo_url, support_url, theme, updated_at, updated_by
    from connect_settings where environment_id = ${environmentId}`;
  return row ? complete(row) : DEFAULT_CONNECT_SETTINGS;
}

/** Replaces the whole branding of the environment (there is no partial update). */
export async function saveConnectSettings(
  sql: Db,
  environmentId: string,
  settings: Omit<ConnectSettings, 'updatedAt' | 'updatedBy'>,
  updatedBy: string,
): Promise<ConnectSettings> {
  const [row]: [ConnectSettings?] = await sql`
    insert into connect_settings (environment_id, display_name, accent_color, logo_url, support_url, theme, updated_by)
    values (${environmentId}, ${settings.displayName}, ${settings.accentColor}, ${settings.logoUrl},
      ${settings.supportUrl}, ${sql.json(settings.theme)}, ${updatedBy})
    on conflict (environment_id) do update set
      display_name = excluded.display_name, accent_color = excluded.accent_color, logo_url = excluded.logo_url,
      support_url = excluded.support_url, theme = excluded.theme, updated_by = excluded.updated_by, updated_at = now()
    returning display_name, accent_color, logo_url, support_url, theme, updated_at, updated_by`;
  if (!row) throw new Error('connect settings upsert returned nothing');
  return complete(row);
}
