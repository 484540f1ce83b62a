import { createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from '../../activities/db/idempotency-keys.js';
import type { Sql } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import { canonicalJson } from '../calls/fingerprint.js';
import { ApiError, ConflictError } from '../errors.js';
import { callerOf } from './authorize.js';
import { parse } from './validate.js';

export const idempotencyHeader = z.object({
  'Idempotency-Key': z.string().min(1).max(200).meta({
    description:
      'Retries with the same key, body and API key get the first answer (kept 24 h); the same key with anything else is 409 idempotency_key_reused.',
  }),
});

/** Runs take the key into the call's fingerprint instead: identical calls share one workflow. */
const CALL_ROUTE = /^\/v1\/actions\/[^/]+\/run\/?$/;

/** Headers of the first answer worth giving again; the rest are per response. */
const REPLAYED_HEADERS = ['content-type', 'location', 'cache-control'];

/**
 * `Idempotency-Key` on every POST: the first answer is stored with a hash of the request; the same
 * key again replays it (`Idempotent-Replayed: true`), with another request is 409
 * `idempotency_key_reused`, and while the first is still running is 409 `conflict`. Our own
 * failures (5xx) are not kept, so a retry runs the request again.
 */
export function idempotency(sql: Sql, keyring: Keyring): RequestHandler {
  return async (req, res, next) => {
    const raw = req.get('idempotency-key');
    if (req.method !== 'POST' || raw === undefined || CALL_ROUTE.test(req.path)) {
      next();
      return;
    }
    const key = parse(idempotencyHeader, { 'Idempotency-Key': raw }, 'header')['Idempotency-Key'];
    const { environmentId, keyId } = callerOf(res);
    // The caller's key is part of the request: another key (perhaps one without the route's
    // scope) sending the same key and body is refused, never given the first caller's answer.
    const requestHash = createHash('sha256')
      .update(JSON.stringify([keyId, req.method, req.originalUrl, canonicalJson(req.body ?? null)]))
      .digest('hex');

    const claim = await claimIdempotencyKey(sql, keyring, environmentId, key, requestHash);
    switch (claim.kind) {
      case 'reused':
        throw new ApiError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for a different request; use a new key.',
        );
      case 'in_flight':
        throw new ConflictError(
          'A request with this Idempotency-Key is still in progress; retry shortly.',
        );
      case 'replay':
        res
          .status(claim.response.status)
          .set(claim.response.headers)
          .set('Idempotent-Replayed', 'true')
          .send(claim.response.body);
        return;
      case 'claimed':
        break;
    }
    const { claimId } = claim;

    // The answer is stored before its first byte leaves: a client that retries the moment it
    // reads the answer must get the replay, never a 409 for a request still "in flight". Once
    // the handler has answered, the outcome is kept even if the client has gone, since the
    // request's effect happened; a claim whose handler never answers is abandoned (above).
    let settled = false;
    const settle = async (body: Buffer): Promise<void> => {
      settled = true;
      const headers = Object.fromEntries(
        REPLAYED_HEADERS.flatMap((name) => {
          const value = res.getHeader(name);
          return typeof value === 'string' ? [[name, value]] : [];
        }),
      );
      try {
        await (res.statusCode < 500
          ? completeIdempotencyKey(sql, keyring, environmentId, key, claimId, {
              status: res.statusCode,
              headers,
              body,
            })
          : releaseIdempotencyKey(sql, environmentId, key, claimId));
      } catch (error: unknown) {
        req.log.error({ err: error }, 'storing the Idempotency-Key outcome failed');
      }
    };
    const send = res.send.bind(res);
    res.send = (chunk?: unknown) => {
      // Objects come back here as the JSON string `res.json` makes of them.
      if (settled || (typeof chunk !== 'string' && !Buffer.isBuffer(chunk))) return send(chunk);
      if (res.getHeader('content-type') === undefined) {
        res.type(typeof chunk === 'string' ? 'html' : 'bin');
      }
      void settle(typeof chunk === 'string' ? Buffer.from(chunk) : chunk).then(() => send(chunk));
      return res;
    };
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (settled) return end(...args);
      void settle(Buffer.alloc(0)).then(() => end(...args));
      return res;
    }) as Response['end'];
    next();
  };
}
