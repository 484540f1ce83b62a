import { randomUUID } from 'node:crypto';
import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

/** How long a first response is kept for replay. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

/**
 * A claim still in flight after this long belongs to a process that died mid-request (no
 * management request runs for minutes): the key is claimed afresh rather than stuck for a day.
 */
export const ABANDONED_AFTER_SECONDS = 5 * 60;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A first answer may hold something only its caller should see (a connect link): sealed at rest. */
const bodyAad = (environmentId: string, key: string) => `idempotency:${environmentId}:${key}`;

export type Claim =
  | { kind: 'claimed'; claimId: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_flight' }
  | { kind: 'reused' };

interface Row {
  requestHash: string;
  state: 'in_flight' | 'done';
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: Buffer | null;
}

/**
 * Claims the key for this request, or says why not: its first response to replay, still in
 * flight, or taken by a different request. A key past its retention, or abandoned in flight, is
 * claimed afresh.
 */
export async function claimIdempotencyKey(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  key: string,
  requestHash: string,
): Promise<Claim> {
  const claimId = randomUUID();
  const [claimed]: [{ key: string }?] = await sql`
    insert into idempotency_keys (environment_id, key, request_hash, state, expires_at, claim_id)
    values (${environmentId}, ${key}, ${requestHash}, 'in_flight',
            now() + make_interval(secs => ${IDEMPOTENCY_RETENTION_SECONDS}), ${claimId})
    on conflict (environment_id, key) do update
      set request_hash = excluded.request_hash, state = 'in_flight', response_status = null,
          response_headers = null, response_body = null, created_at = now(),
          expires_at = excluded.expires_at, claim_id = excluded.claim_id
      where idempotency_keys.expires_at <= now()
         or (idempotency_keys.state = 'in_flight'
             and idempotency_keys.created_at <= now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS}))
    returning key`;
  if (claimed) return { kind: 'claimed', claimId };
  const [row]: [Row?] = await sql`
    select request_hash, state, response_status, response_headers, response_body
    from idempotency_keys where environment_id = ${environmentId} and key = ${key}`;
  // Released between the two statements (its first request failed): the caller may try again.
  if (!row) return { kind: 'in_flight' };
  if (row.requestHash !== requestHash) return { kind: 'reused' };
  if (row.state === 'in_flight' || row.responseStatus === null) return { kind: 'in_flight' };
  return {
    kind: 'replay',
    response: {
      status: row.responseStatus,
      headers: row.responseHeaders ?? {},
      body: row.responseBody
        ? Buffer.from(
            open(keyring, row.responseBody.toString('utf8'), bodyAad(environmentId, key)),
            'base64',
          )
        : Buffer.alloc(0),
    },
  };
}

/** Stores the first answer, if the claim is still this request's (see 008's note). */
export async function completeIdempotencyKey(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  key: string,
  claimId: string,
  response: StoredResponse,
): Promise<void> {
  await sql`
    update idempotency_keys
    set state = 'done', response_status = ${response.status},
        response_headers = ${sql.json(response.headers)},
        response_body = ${Buffer.from(
          seal(keyring, response.body.toString('base64'), bodyAad(environmentId, key)),
        )}
    where environment_id = ${environmentId} and key = ${key} and claim_id = ${claimId}
      and state = 'in_flight'`;
}

/** Forgets a claim whose request failed on our side, so a retry runs it again. */
export async function releaseIdempotencyKey(
  sql: Db,
  environmentId: string,
  key: string,
  claimId: string,
): Promise<void> {
  await sql`
    delete from idempotency_keys
    where environment_id = ${environmentId} and key = ${key} and claim_id = ${claimId}
      and state = 'in_flight'`;
}
