/** What the refresh workflow is asked, and answers. No token ever travels in either. */
export interface RefreshRequest {
  connectionId: string;
  /** When the caller asked (ISO): a refresh completed after this satisfies it. */
  requestedAt: string;
  /** Refresh even if the access token is still fresh (`POST …/refresh`). */
  force: boolean;
}

export interface RefreshResult {
  connectionId: string;
  status: 'active' | 'expired' | 'revoked' | 'missing';
  refreshed: boolean;
  lastRefreshedAt: string | null;
  accessTokenExpiresAt: string | null;
}

/** Seconds before expiry at which a token counts as stale (DESIGN.md §5). */
export const REFRESH_MARGIN_SECONDS = 60;
