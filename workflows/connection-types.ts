/** What the refresh workflow is asked, and answers. No token ever travels in either. */
export interface RefreshRequest {
  connectionId: string;
  /**
   * The connection's refresh count when the caller read its token: a refresh completed since
   * satisfies it. A count, not a time, so no two hosts' clocks are ever compared.
   */
  seenRefreshCount: number;
  /** Refresh even if the access token is still fresh (`POST …/refresh`). */
  force: boolean;
}

export interface RefreshResult {
  connectionId: string;
  /** `unavailable`: the app's token endpoint could not be reached, even after retries. */
  status: 'active' | 'expired' | 'revoked' | 'missing' | 'unavailable';
  refreshed: boolean;
  lastRefreshedAt: string | null;
  accessTokenExpiresAt: string | null;
  /**
   * With `unavailable`: the authorization server refused the operator's own MCP OAuth client
   * (`invalid_client`). The connection stays active: its grant is fine, the client's
   * secret or registration is not, and fixing it (rotate) makes the next refresh work.
   */
  refusedClient?: { mcpOAuthClientId: string; clientId: string };
}

/**
 * Seconds before expiry at which a token counts as stale and is refreshed before use, so a call
 * never sets out with a token that expires on its way.
 */
export const REFRESH_MARGIN_SECONDS = 60;

/** Whether an access token expiring at `expiresAt` should be refreshed before use at `now`. */
export function needsRefresh(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && expiresAt.getTime() - now.getTime() <= REFRESH_MARGIN_SECONDS * 1000;
}

/** Why a connect attempt ended without a connection; each maps to a branded error page. */
export type ConnectFailure =
  | 'invalid_state'
  | 'attempt_expired'
  | 'link_used'
  | 'link_expired'
  | 'app_not_configured'
  | 'exchange_failed'
  // A reconnect must bring the account it renews, and the app must say which it is.
  | 'account_mismatch'
  | 'account_unverified'
  // An MCP app's authorization response named another issuer than its server, or none where
  // that server promised one (RFC 9207): it came from elsewhere, and its code was not used.
  | 'response_issuer_mismatch'
  | 'connection_revoked';

export type ConnectOutcome =
  { ok: true; connectionId: string; linkId: string } | { ok: false; code: ConnectFailure };

/** Refreshes run on a task queue of their own (see worker/worker.ts for why). */
export function refreshTaskQueue(taskQueue: string): string {
  return `${taskQueue}-refresh`;
}
