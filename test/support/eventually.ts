import { setTimeout as sleep } from 'node:timers/promises';

/** Longer than any test's timeout: only so that a wait for what never comes cannot outlive it. */
const OUTLIVES_ANY_TEST_MS = 15 * 60_000;

/**
 * Asks `probe` until it answers something other than null or undefined, for a state the service
 * reaches on its own and cannot tell the test of: what Temporal's visibility lists (eventually
 * consistent), a status a workflow writes, a delivery a worker makes. No deadline of its own that
 * a loaded machine could outlast: the test's timeout ends a wait for what never comes.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | null | undefined> | T | null | undefined,
  everyMs = 100,
): Promise<T> {
  const givenUpAt = Date.now() + OUTLIVES_ANY_TEST_MS;
  for (;;) {
    const found = await probe();
    if (found !== null && found !== undefined) return found;
    if (Date.now() > givenUpAt) throw new Error(`never happened: ${what}`);
    await sleep(everyMs);
  }
}
