/**
 * The user's credential on a request to an OpenAPI app, by the kind of their connection: an
 * entered credential (API key, bearer, basic: activities/credentials) or an OAuth access token
 * (kept fresh as a catalog app's is: activities/connections/access-token.ts). What is added is the
 * secret itself: it goes on the request being sent and nowhere else (no log, no error, no
 * outcome).
 */
import type { Sql } from '../../infra/database/client.js';
import {
  applyRequestAuth,
  credentialForCall,
  noteCredentialAnswer,
} from '../credentials/request-auth.js';
import { validAccessToken, type AccessTokenDeps } from '../connections/access-token.js';

export type UnusableConnection = 'expired' | 'revoked' | 'missing' | 'unavailable';

/** One connection's credential for the requests of one call. */
export interface RequestCredential {
  /**
   * Sets the credential on the request about to be sent. `force`: the app refused the last one
   * (401), so an OAuth token is refreshed first. A connection that cannot serve says why.
   */
  apply(
    headers: Headers,
    query: URLSearchParams,
    force: boolean,
  ): Promise<{ ok: true } | { ok: false; status: UnusableConnection }>;
  /** Whether a 401 is worth one more request with a refreshed credential (OAuth: once). */
  refreshable: boolean;
  /** What the app answered a request sent with it: a 401 to an entered credential expires it. */
  answered(status: number): Promise<void>;
}

const unusable = (status: UnusableConnection): RequestCredential => ({
  apply: () => Promise.resolve({ ok: false, status }),
  refreshable: false,
  answered: () => Promise.resolve(),
});

/**
 * The credential of `connectionId`, whose app's users now connect by `kind`. A connection of
 * another kind (made before an operator chose another scheme) is not sent where it was not meant
 * to go: it answers `expired`, so the user reconnects, which replaces it.
 */
export async function requestCredential(
  deps: AccessTokenDeps & { sql: Sql },
  connectionId: string,
  kind: 'credential' | 'oauth2',
): Promise<RequestCredential> {
  const [row]: [{ authKind: string }?] = await deps.sql`
    select auth_kind from connections where id = ${connectionId}`;
  if (!row) return unusable('missing');
  if (row.authKind !== kind) return unusable('expired');
  if (kind === 'credential') {
    return {
      apply: async (headers, query) => {
        const credential = await credentialForCall(deps.sql, deps.config.encryption, connectionId);
        if (credential.kind !== 'ready') return { ok: false, status: credential.status };
        applyRequestAuth(credential.auth, headers, query);
        return { ok: true };
      },
      refreshable: false,
      answered: async (status) => {
        await noteCredentialAnswer(deps.sql, connectionId, status);
      },
    };
  }
  return {
    apply: async (headers, _query, force) => {
      const token = await validAccessToken(deps, connectionId, { force });
      if (!token.ok) return { ok: false, status: token.status };
      headers.set('authorization', `Bearer ${token.accessToken}`);
      return { ok: true };
    },
    refreshable: true,
    answered: () => Promise.resolve(),
  };
}
