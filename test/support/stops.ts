import { afterAll } from '@jest/globals';

/**
 * Something a test starts and must end (a stack, a server, a database), by its one way of ending.
 * A thing with two (a restartable server: `stop` leaves its proxy up, `close` ends both) does not
 * fit: register the one that ends it all with `push` rather than have one guessed.
 */
export type Stoppable =
  | { stop(): Promise<unknown>; close?: never; drop?: never }
  | { close(): Promise<unknown>; stop?: never; drop?: never }
  | { drop(): Promise<unknown>; stop?: never; close?: never };

/**
 * What has been started, to be stopped last first. Each is registered the moment it has started,
 * so a set-up that fails part-way stops exactly what it started: its own error is the one
 * reported, not a TypeError from a stop that reached for what never started.
 */
export class Stops {
  private readonly stops: (() => Promise<unknown>)[] = [];

  /** Registers a stop of anything (a client, a temporary folder). */
  readonly push = (stop: () => Promise<unknown>): void => {
    this.stops.push(stop);
  };

  /**
   * Registers how `started` ends (stop, close or drop) and hands it back; bound, so that starts
   * run together register each as it comes: `Promise.all([startA().then(stops.add), …])`.
   */
  readonly add = <T extends Stoppable>(started: T): T => {
    this.stops.push(() => {
      const stoppable: Stoppable = started;
      if (stoppable.stop) return stoppable.stop();
      if (stoppable.close) return stoppable.close();
      return stoppable.drop();
    });
    return started;
  };

  /**
   * Stops everything registered, last first, each once; every stop runs even when one fails,
   * and the first failure is thrown after the rest have run.
   */
  async stopAll(): Promise<void> {
    const failures: unknown[] = [];
    for (let stop = this.stops.pop(); stop; stop = this.stops.pop()) {
      try {
        await stop();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

/**
 * A test file's `Stops`, stopped after all its tests: `db = started.add(await
 * createTestDatabase())` in beforeAll replaces an afterAll that stops each by name.
 */
export function stopsAfterAll(timeoutMs?: number): Stops {
  const stops = new Stops();
  afterAll(() => stops.stopAll(), timeoutMs);
  return stops;
}

/**
 * Runs a helper's start-up with a `Stops` of its own: when it fails part-way, what it had
 * started is stopped before its error is thrown on (a stop failing then is not what went wrong,
 * and does not replace that error). On success the helper keeps the `Stops` for its own stop.
 */
export async function startOrUndo<T>(start: (stops: Stops) => Promise<T>): Promise<T> {
  const stops = new Stops();
  try {
    return await start(stops);
  } catch (error) {
    await stops.stopAll().catch(() => undefined);
    throw error;
  }
}
