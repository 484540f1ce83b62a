import type { RequestHandler } from 'express';
import { findCallerByKey, type Caller } from '../../activities/db/api-keys.js';
import type { Sql } from '../../infra/database/client.js';
import { InvalidApiKeyError } from '../errors.js';
import { keyCacheOf } from './key-cache.js';

const KEY_SHAPE = /^gk_[a-z][a-z0-9-]{0,39}_[A-Za-z0-9_-]{32}$/;

/**
 * Reads the key from either scheme: `Authorization: Bearer` (bearerKey) or `X-API-Key` (apiKey).
 * Shared with the Nexus handler, whose operation headers carry the key the same way.
 */
export function presentedKey(
  authorization: string | undefined,
  headerKey: string | undefined,
): string {
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1])
      throw new InvalidApiKeyError('The Authorization header must be "Bearer <API key>".');
    bearer = match[1];
  }
  if (bearer !== undefined && headerKey !== undefined && bearer !== headerKey.trim()) {
    throw new InvalidApiKeyError('Authorization and X-API-Key carry different keys; send one.');
  }
  const key = bearer ?? headerKey?.trim();
  if (!key) {
    throw new InvalidApiKeyError('An API key is required: send "Authorization: Bearer <API key>".');
  }
  return key;
}

/**
 * The live key's caller; a malformed, unknown or revoked key is InvalidApiKeyError alike. `find`
 * reads the key: from Postgres by default, or through the API's key cache.
 */
export async function recognisedCaller(
  sql: Sql,
  key: string,
  find: (key: string) => Promise<Caller | null> = (k) => findCallerByKey(sql, k),
): Promise<Caller> {
  const caller = KEY_SHAPE.test(key) ? await find(key) : null;
  if (!caller) throw new InvalidApiKeyError();
  return caller;
}

/**
 * Recognises the caller. A key belongs to one environment; a caller may also name the
 * environment it means to reach (`Gatehouse-Environment`), and a key of another environment is
 * then refused like a wrong one.
 */
export function authenticate(sql: Sql): RequestHandler {
  // Revocation and scope changes reach it within KEY_CHANGE_BOUND_MS.
  const keys = keyCacheOf(sql);
  return async (req, res, next) => {
    const caller = await recognisedCaller(
      sql,
      presentedKey(req.get('authorization'), req.get('x-api-key')),
      (key) => keys.caller(key),
    );
    const environment = req.get('gatehouse-environment');
    if (environment !== undefined && environment !== caller.environmentName) {
      throw new InvalidApiKeyError(`This key does not belong to the environment "${environment}".`);
    }
    res.locals.caller = caller;
    req.log = req.log.child({ keyId: caller.keyId, environment: caller.environmentName });
    next();
  };
}
