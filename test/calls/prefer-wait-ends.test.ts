import { beforeAll, describe, expect, it } from '@jest/globals';
import { connectClient } from '../../infra/temporal/connection.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { eventually } from '../support/eventually.js';
import { bearer } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A held call whose caller waits (`Prefer: wait`) and gives up undecided leaves nothing of the
 * wait behind in the API: the one wait its process keeps in the workflow (an Update and the
 * long poll for its result) ends with the last caller on it. Left running, it outlived the
 * request by up to PREFER_WAIT_MAX_SECONDS, and an API closing its Temporal connection then had
 * a call retried on a closed channel ("Channel has been shut down", thrown from a timer).
 */

let stack: CallStack;
let api: TestApi;
/** Update and poll calls the API's Temporal client has in flight now, and all it made. */
let inFlight = 0;
let made = 0;

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  await stack.connect('u_gives_up');
  const client = await connectClient(stack.config.temporal, stack.config.encryption);
  started.push(() => client.connection.close());
  // Counted at the connection the API's client calls through: what it has open, not a stand-in.
  const service = client.connection.workflowService;
  for (const method of ['updateWorkflowExecution', 'pollWorkflowExecutionUpdate'] as const) {
    const call = service[method].bind(service) as (request: unknown) => Promise<unknown>;
    Object.assign(service, {
      [method]: async (request: unknown) => {
        inFlight += 1;
        made += 1;
        try {
          return await call(request);
        } finally {
          inFlight -= 1;
        }
      },
    });
  }
  api = started.add(
    await startTestApi({ ...stack.config, api: { ...stack.config.api, port: 0 } }, stack.db.sql, {
      temporal: client,
    }),
  );
}, 300_000);

describe('Prefer: wait, given up undecided', () => {
  it('ends the wait in the workflow with its last caller', async () => {
    const hangUp = new AbortController();
    const answer = fetch(`${api.url}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: { ...bearer(stack.key.key), 'content-type': 'application/json', prefer: 'wait=60' },
      body: JSON.stringify({ user: 'u_gives_up', input: { title: 'nobody decides' } }),
      signal: hangUp.signal,
    }).catch((error: unknown) => error);
    // It waits in the workflow: its Update, then the long poll for the Update's result.
    await eventually('the API waits in the workflow', () => (made > 1 ? made : null));
    expect(inFlight).toBeGreaterThan(0);
    // The only caller gives up long before PREFER_WAIT_MAX_SECONDS (60 s)…
    hangUp.abort();
    await answer;
    // …and the wait ends with it: nothing of it stays open on the API's Temporal connection.
    await eventually('the wait ends with its caller', () => (inFlight === 0 ? true : null));
    expect(inFlight).toBe(0);
  });
});
