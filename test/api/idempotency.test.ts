import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  ABANDONED_AFTER_SECONDS,
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from '../../activities/db/idempotency-keys.js';
import { canonicalJson } from '../../api/calls/fingerprint.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { createTestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;
let second: TestApi;

async function createLink(
  api: { url: string },
  body: Record<string, unknown>,
  key: string | undefined,
  apiKey: string = stack.key.key,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${api.url}/v1/connect/links`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

const link = { user: 'u_idem', customer: 'acme-co', app: 'acme' };

interface ManagementAnswer {
  status: number;
  replayed: string | null;
  body: {
    data?: { id: string; [field: string]: unknown };
    error?: { code: string; [field: string]: unknown };
  };
}

/** A management POST through the X-API-Key scheme with an Idempotency-Key; no body when undefined. */
async function managementPost(
  path: string,
  body: object | undefined,
  key: string,
): Promise<ManagementAnswer> {
  const response = await fetch(`${stack.api.url}${path}`, {
    method: 'POST',
    headers: {
      'x-api-key': stack.key.key,
      'idempotency-key': key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await response.json()) as ManagementAnswer['body'],
  };
}

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startConnectStack());
  // A second API process on the same database: keys must hold across instances.
  second = started.add(
    await startTestApi({ ...stack.config, api: { ...stack.config.api, port: 0 } }, stack.db.sql, {
      temporal: stack.temporal,
    }),
  );
});

describe('Idempotency-Key on POST', () => {
  it('replays the first answer, from any API instance', async () => {
    const first = await createLink(stack.api, link, 'key-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await createLink(stack.api, link, 'key-1');
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const elsewhere = await createLink(second, link, 'key-1');
    expect(elsewhere.body).toEqual(first.body);
    const [count] = await stack.db.sql<
      { n: number }[]
    >`select count(*)::int as n from connect_links`;
    expect(count?.n).toBe(1);
    // The stored answer holds the link: it is sealed, like the link token itself.
    const [stored] = await stack.db.sql<{ body: Buffer }[]>`
      select response_body as body from idempotency_keys where key = 'key-1'`;
    const token = new URL(String(first.body.url)).pathname.split('/').at(-1) ?? '';
    expect(token.length).toBeGreaterThan(10);
    expect(stored?.body.toString('utf8')).not.toContain(token);
  });

  it('without a key, each request is new', async () => {
    const a = await createLink(stack.api, link, undefined);
    const b = await createLink(stack.api, link, undefined);
    expect(a.body.id).not.toBe(b.body.id);
  });

  it('replays to a retry sent the moment the first answer arrives, never 409 in flight', async () => {
    // The answer must be stored before its bytes leave: a client retrying as soon as it has read
    // the answer (a lost-connection retry loop) once met a claim still marked in flight.
    // A slow database makes the window wide enough to hit every time: storing an answer takes
    // 300 ms here (a trigger on these keys only), as it may on a loaded Postgres.
    await stack.db.sql.unsafe(`
      create function slow_idempotency_store() returns trigger language plpgsql as $$
      begin
        if new.key like 'instant-retry-%' then perform pg_sleep(0.3); end if;
        return new;
      end $$;
      create trigger slow_idempotency_store before update on idempotency_keys
        for each row execute function slow_idempotency_store();`);
    const answers: unknown[] = [];
    try {
      for (let i = 0; i < 5; i += 1) {
        const key = `instant-retry-${String(i)}`;
        const first = await createLink(stack.api, link, key);
        const again = await createLink(stack.api, link, key);
        answers.push([first.status, again.status, again.headers.get('idempotent-replayed')]);
      }
    } finally {
      await stack.db.sql.unsafe(`
        drop trigger slow_idempotency_store on idempotency_keys;
        drop function slow_idempotency_store();`);
    }
    expect(answers).toEqual(Array.from({ length: 5 }, () => [201, 201, 'true']));
  });

  it('refuses the key for a different request', async () => {
    await createLink(stack.api, link, 'key-2');
    const other = await createLink(stack.api, { ...link, user: 'u_other' }, 'key-2');
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused', retryable: false });
  });

  it('answers 409 conflict while the first request is in flight', async () => {
    // The first request with this key has been claimed but has not finished.
    const hash = createHash('sha256')
      .update(JSON.stringify([stack.key.id, 'POST', '/v1/connect/links', canonicalJson(link)]))
      .digest('hex');
    await claimIdempotencyKey(
      stack.db.sql,
      stack.config.encryption,
      stack.environmentId,
      'key-3',
      hash,
    );
    const busy = await createLink(stack.api, link, 'key-3');
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'conflict' });
  });

  it("never replays one API key's answer to another, even with the same key and body", async () => {
    const first = await createLink(stack.api, link, 'key-shared');
    expect(first.status).toBe(201);
    const readOnly = await createTestKey(stack.db.sql, { env: 'test', access: 'read_only' });
    const other = await createLink(stack.api, link, 'key-shared', readOnly.key);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'idempotency_key_reused' });
    expect(JSON.stringify(other.body)).not.toContain(String(first.body.url));
  });

  it('claims afresh a key left in flight by a request that never finished', async () => {
    const hash = createHash('sha256')
      .update(JSON.stringify([stack.key.id, 'POST', '/v1/connect/links', canonicalJson(link)]))
      .digest('hex');
    const stale = await claimIdempotencyKey(
      stack.db.sql,
      stack.config.encryption,
      stack.environmentId,
      'key-abandoned',
      hash,
    );
    if (stale.kind !== 'claimed') throw new Error(`expected a claim, got ${stale.kind}`);
    expect((await createLink(stack.api, link, 'key-abandoned')).status).toBe(409);
    await stack.db.sql`
      update idempotency_keys set created_at = now() - make_interval(secs => ${ABANDONED_AFTER_SECONDS + 1})
      where key = 'key-abandoned'`;
    const retried = await createLink(stack.api, link, 'key-abandoned');
    expect(retried.status).toBe(201);
    // The first request, slow but alive, finishes late: it must not touch the new claim's answer.
    await completeIdempotencyKey(
      stack.db.sql,
      stack.config.encryption,
      stack.environmentId,
      'key-abandoned',
      stale.claimId,
      { status: 201, headers: {}, body: Buffer.from('{"id":"from the stale request"}') },
    );
    await releaseIdempotencyKey(stack.db.sql, stack.environmentId, 'key-abandoned', stale.claimId);
    const replayed = await createLink(stack.api, link, 'key-abandoned');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(retried.body.id);
  });

  it('forgets a key after 24 hours', async () => {
    const first = await createLink(stack.api, link, 'key-4');
    await stack.db
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = 'key-4'`;
    const later = await createLink(stack.api, link, 'key-4');
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
  });

  it.each([
    ['', 'empty'],
    ['k'.repeat(201), '201 characters'],
  ])('rejects a key that is %s (%s)', async (key) => {
    const answer = await createLink(stack.api, link, key);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'Idempotency-Key', message: expect.any(String) }],
    });
  });

  it('holds for management operations: create_auth_config and create_mcp_oauth_client', async () => {
    const post = async (path: string, body: object, key: string) => {
      const response = await fetch(`${stack.api.url}${path}`, {
        method: 'POST',
        headers: {
          'x-api-key': stack.key.key,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        replayed: response.headers.get('idempotent-replayed'),
        body: (await response.json()) as { data?: { id: string }; error?: { code: string } },
      };
    };
    const config = { app: 'acme', name: 'replayed', clientId: 'c-1', clientSecret: 's'.repeat(20) };
    const first = await post('/v1/auth-configs', config, 'mgmt-1');
    const again = await post('/v1/auth-configs', config, 'mgmt-1');
    expect(first.status).toBe(200);
    expect(again).toMatchObject({ status: 200, replayed: 'true' });
    expect(again.body.data?.id).toBe(first.body.data?.id);
    const [count] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from auth_configs where name = 'replayed'`;
    expect(count?.n).toBe(1);
    const changed = await post('/v1/auth-configs', { ...config, name: 'other' }, 'mgmt-1');
    expect(changed.body.error?.code).toBe('idempotency_key_reused');

    const client = {
      app: 'acme',
      client: {
        issuer: 'https://issuer.example',
        clientId: 'mcp-1',
        authMethod: 'none',
        source: 'byo',
      },
    };
    const created = await post('/v1/mcp-oauth-clients', client, 'mgmt-2');
    const replayed = await post('/v1/mcp-oauth-clients', client, 'mgmt-2');
    expect(created.status).toBe(200);
    expect(replayed).toMatchObject({ status: 200, replayed: 'true' });
    expect(replayed.body.data?.id).toBe(created.body.data?.id);
  });

  it('replays disable_auth_config: the stored 200, not a 409 for the already disabled config', async () => {
    const created = await managementPost(
      '/v1/auth-configs',
      { app: 'acme', name: 'disabled once', clientId: 'c-2', clientSecret: 's'.repeat(20) },
      'mgmt-disable-create',
    );
    expect(created.status).toBe(200);
    const id = String(created.body.data?.id);
    const path = `/v1/auth-configs/${id}/disable`;
    const first = await managementPost(path, undefined, 'mgmt-disable');
    expect(first).toMatchObject({ status: 200, replayed: null });
    expect(first.body.data).toMatchObject({ id, status: 'disabled' });
    const again = await managementPost(path, undefined, 'mgmt-disable');
    expect(again).toMatchObject({ status: 200, replayed: 'true' });
    expect(again.body).toEqual(first.body);
    // Disabled once: the row keeps the first answer's time; a fresh disable is a conflict.
    const [row] = await stack.db.sql<{ enabled: boolean; disabledAt: Date }[]>`
      select enabled, disabled_at from auth_configs where id = ${id}`;
    expect(row?.enabled).toBe(false);
    expect(row?.disabledAt.toISOString()).toBe(first.body.data?.disabled_at);
    const fresh = await managementPost(path, undefined, 'mgmt-disable-other');
    expect(fresh.status).toBe(409);
    expect(fresh.body.error?.code).toBe('conflict');
  });

  it('replays rotate, retire and select of an MCP OAuth client, running each once', async () => {
    const client = (clientId: string) => ({
      app: 'notion',
      client: {
        issuer: 'https://issuer.example',
        clientId,
        clientSecret: 'first-secret-value',
        authMethod: 'client_secret_post',
        source: 'byo',
      },
    });
    const a = await managementPost('/v1/mcp-oauth-clients', client('mcp-a'), 'mcp-create-a');
    const b = await managementPost('/v1/mcp-oauth-clients', client('mcp-b'), 'mcp-create-b');
    expect([a.status, b.status]).toEqual([200, 200]);
    const idA = String(a.body.data?.id);
    const idB = String(b.body.data?.id);
    const rowOf = async (id: string) => {
      const [row] = await stack.db.sql<
        {
          clientId: string;
          status: string;
          selected: boolean;
          rotatedAt: Date | null;
          updatedAt: Date;
        }[]
      >`select client_id, status, selected, rotated_at, updated_at from mcp_oauth_clients
        where id = ${id}`;
      return row;
    };

    // Rotate: the replay gives the first answer and changes nothing more.
    const rotation = { clientSecret: 'second-secret-value', clientId: 'mcp-a-rotated' };
    const rotated = await managementPost(
      `/v1/mcp-oauth-clients/${idA}/rotate`,
      rotation,
      'mcp-rot',
    );
    expect(rotated).toMatchObject({ status: 200, replayed: null });
    expect(rotated.body.data).toMatchObject({ id: idA, clientId: 'mcp-a-rotated' });
    const afterRotate = await rowOf(idA);
    const rotatedAgain = await managementPost(
      `/v1/mcp-oauth-clients/${idA}/rotate`,
      rotation,
      'mcp-rot',
    );
    expect(rotatedAgain).toMatchObject({ status: 200, replayed: 'true' });
    expect(rotatedAgain.body).toEqual(rotated.body);
    expect(await rowOf(idA)).toEqual(afterRotate);
    expect(afterRotate?.rotatedAt?.toISOString()).toBe(rotated.body.data?.rotated_at);
    const reused = await managementPost(
      `/v1/mcp-oauth-clients/${idA}/rotate`,
      { clientSecret: 'third-secret-value' },
      'mcp-rot',
    );
    expect(reused.body.error?.code).toBe('idempotency_key_reused');

    // Select: the replay answers "A selected" even after B took the selection, and leaves B.
    const selected = await managementPost(
      `/v1/mcp-oauth-clients/${idA}/select`,
      undefined,
      'mcp-sel',
    );
    expect(selected).toMatchObject({ status: 200, replayed: null });
    expect(selected.body.data).toMatchObject({ id: idA, selected: true });
    const other = await managementPost(
      `/v1/mcp-oauth-clients/${idB}/select`,
      undefined,
      'mcp-sel-b',
    );
    expect(other.body.data).toMatchObject({ id: idB, selected: true });
    const selectedAgain = await managementPost(
      `/v1/mcp-oauth-clients/${idA}/select`,
      undefined,
      'mcp-sel',
    );
    expect(selectedAgain).toMatchObject({ status: 200, replayed: 'true' });
    expect(selectedAgain.body).toEqual(selected.body);
    expect((await rowOf(idA))?.selected).toBe(false);
    expect((await rowOf(idB))?.selected).toBe(true);

    // Retire: the replay gives the stored 200, where retiring again would be a 409.
    const retired = await managementPost(
      `/v1/mcp-oauth-clients/${idB}/retire`,
      undefined,
      'mcp-ret',
    );
    expect(retired).toMatchObject({ status: 200, replayed: null });
    expect(retired.body.data).toMatchObject({ id: idB, status: 'retired', selected: false });
    const afterRetire = await rowOf(idB);
    const retiredAgain = await managementPost(
      `/v1/mcp-oauth-clients/${idB}/retire`,
      undefined,
      'mcp-ret',
    );
    expect(retiredAgain).toMatchObject({ status: 200, replayed: 'true' });
    expect(retiredAgain.body).toEqual(retired.body);
    expect(await rowOf(idB)).toEqual(afterRetire);
    expect(afterRetire?.status).toBe('retired');
    const fresh = await managementPost(
      `/v1/mcp-oauth-clients/${idB}/retire`,
      undefined,
      'mcp-ret-2',
    );
    expect(fresh.status).toBe(409);
    expect(fresh.body.error?.code).toBe('conflict');
  });

  it.each([1, 200])('accepts a key of %i characters', async (length) => {
    expect((await createLink(stack.api, link, 'k'.repeat(length))).status).toBe(201);
  });
});
