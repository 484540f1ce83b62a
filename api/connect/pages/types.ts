/** What the hosted connect pages need to know about the environment that owns the connect link. */
export interface ConnectBranding {
  /** The environment's product name, e.g. "Acme Corp". */
  displayName: string;
  /** '#rrggbb' in lowercase; anything else is ignored in favour of the default. */
  accentColor: string;
  logoUrl: string | null;
  supportUrl: string | null;
  /** `radius` is in px and applies to buttons and cards. */
  theme: { mode: 'light' | 'dark' | 'system'; radius?: number };
}

/**
 * A permission the app is asked for: its name at the app, and what it allows in words where the
 * catalog knows them (the words are what a person reads; the name only stands in for them).
 */
export interface RequestedScope {
  scope: string;
  description?: string | undefined;
}

/** The third-party app being connected, e.g. `{ id: 'acme', name: 'Acme Tasks' }`. */
export interface AppInfo {
  id: string;
  name: string;
}

export const DEFAULT_BRANDING: ConnectBranding = {
  displayName: 'Gatehouse',
  accentColor: '#4f46e5',
  logoUrl: null,
  supportUrl: null,
  theme: { mode: 'system', radius: 10 },
};
