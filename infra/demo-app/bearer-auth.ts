import type { RequestHandler, Response } from 'express';
import type { Provider } from 'oidc-provider';

export interface TokenAuth {
  accountId: string;
  scopes: ReadonlySet<string>;
}

/** Locals set by bearerAuth for the handlers behind it. */
export interface AuthLocals {
  auth: TokenAuth;
}

/**
 * Validates `Authorization: Bearer` against the provider's own token store: the token must
 * exist, be unexpired (without oidc-provider's clock tolerance, so short TTLs bite exactly) and
 * belong to a grant that has not been revoked.
 */
export function bearerAuth(provider: Provider): RequestHandler {
  return async (req, res, next) => {
    const match = /^Bearer ([^\s]+)$/i.exec(req.get('authorization') ?? '');
    const auth = match?.[1] === undefined ? undefined : await authenticate(provider, match[1]);
    if (!auth) {
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="acme-tasks", error="invalid_token"')
        .json({ error: 'invalid_token' });
      return;
    }
    res.locals['auth'] = auth;
    next();
  };
}

async function authenticate(provider: Provider, value: string): Promise<TokenAuth | undefined> {
  const token = await provider.AccessToken.find(value);
  if (!token || token.isExpired || !token.accountId || !token.grantId) return undefined;
  const grant = await provider.Grant.find(token.grantId);
  if (!grant || grant.isExpired || grant.accountId !== token.accountId) return undefined;
  return { accountId: token.accountId, scopes: new Set(token.scope?.split(' ') ?? []) };
}

/** Answers 403 and returns false unless the request's token carries `scope`. */
export function requireScope(res: Response<unknown, AuthLocals>, scope: string): boolean {
  if (res.locals.auth.scopes.has(scope)) return true;
  res
    .status(403)
    .set(
      'WWW-Authenticate',
      `Bearer realm="acme-tasks", error="insufficient_scope", scope="${scope}"`,
    )
    .json({ error: 'insufficient_scope', required_scope: scope });
  return false;
}
