import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import type { SeededConnection } from '../support/seed-connection.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * An app whose token endpoint cannot be reached is an unavailable app (503), not an error of
 * ours (500): for a forced refresh, for an export that needs a refresh, and for a call.
 */
let stack: CallStack;
let ida: SeededConnection;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  ida = await stack.connect('u_ida');
  // The access token is stale, so every use must refresh first; then the app goes away.
  await stack.db.sql`
    update connections set access_token_expires_at = now() - interval '1 minute'
    where id = ${ida.connection.id}`;
  await stack.acme.demo.stop();
});

describe('the token endpoint is unreachable', () => {
  it.each([
    ['a forced refresh', 'POST', 'refresh'],
    ['an export', 'GET', 'export'],
  ])('%s answers 503 upstream_unavailable', async (_name, method, verb) => {
    const answer = await stack.request(
      stack.key,
      method,
      `/v1/connections/${ida.connection.id}/${verb}`,
    );
    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
      upstream_status: 503,
    });
  });

  it('a call answers 503 upstream_unavailable and is audited as failed', async () => {
    const answer = await stack.run('acme.list_tasks', { user: 'u_ida' });
    expect(answer.status).toBe(503);
    expect(answer.body.error).toMatchObject({ code: 'upstream_unavailable', upstream_status: 503 });
    const [event] = await stack.db.sql<{ decision: string; reason: string }[]>`
      select decision, reason from audit_events where user_external_id = 'u_ida'`;
    expect(event).toEqual({ decision: 'failed', reason: 'upstream_unavailable' });
    // The connection itself is untouched: the app is down, the grant is not dead.
    const [row] = await stack.db.sql<{ status: string }[]>`
      select status from connections where id = ${ida.connection.id}`;
    expect(row?.status).toBe('active');
  });
});
