import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectClient } from '../../infra/temporal/connection.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { bearer } from '../support/keys.js';

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

beforeAll(async () => {
  stack = await startCallStack();
  await stack.connect('u_gives_up');
  const client = await connectClient(stack.config.temporal, stack.config.encryption);
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
  api = await startTestApi(
    { ...stack.config, api: { ...stack.config.api, port: 0 } },
    stack.db.sql,
    { temporal: client },
  );
}, 300_000);

afterAll(async () => {
  await api.close();
  await api.temporal.connection.close();
  await stack.stop();
});

/** Resolves once nothing is in flight, or with what still is after `ms`. */
async function settled(ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (inFlight > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return inFlight;
}

describe('Prefer: wait, given up undecided', () => {
  it('ends the wait in the workflow with its last caller', async () => {
    const answer = await fetch(`${api.url}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: { ...bearer(stack.key.key), 'content-type': 'application/json', prefer: 'wait=1' },
      body: JSON.stringify({ user: 'u_gives_up', input: { title: 'nobody decides' } }),
    });
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
      'approval_required',
    );
    // It did wait in the workflow…
    expect(made).toBeGreaterThan(1);
    // …and that wait ends with the caller, well before PREFER_WAIT_MAX_SECONDS (60 s).
    expect(await settled(20_000)).toBe(0);
  }, 60_000);
});
