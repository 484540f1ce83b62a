import type { Db } from '../../infra/database/client.js';

export interface ConnectSettings {
  displayName: string;
  accentColor: string;
  logoUrl: string | null;
  supportUrl: string | null;
  theme: { mode: 'light' | 'dark' | 'system'; radius?: number };
  updatedAt: Date | null;
  updatedBy: string | null;
}

export const DEFAULT_CONNECT_SETTINGS: ConnectSettings = {
  displayName: 'Gatehouse',
  accentColor: '#4f46e5',
  logoUrl: null,
  supportUrl: null,
  theme: { mode: 'system' },
  updatedAt: null,
  updatedBy: null,
};

/** The branding of an environment's connect pages; sensible defaults until someone sets it. */
export async function getConnectSettings(sql: Db, environmentId: string): Promise<ConnectSettings> {
  const [row]: [ConnectSettings?] = await sql`
    select display_name, accent_color, logo_url, support_url, theme, updated_at, updated_by
    from connect_settings where environment_id = ${environmentId}`;
  return row ?? DEFAULT_CONNECT_SETTINGS;
}

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
  return row;
}
