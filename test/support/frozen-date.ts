import { jest } from '@jest/globals';

/**
 * Jest's clock at `now`, faking only `Date`: timers, I/O and the event loop run as they do, and
 * `Date` moves only when the test says (`jest.setSystemTime`), for code under test in this
 * process whose outcome hangs on how much time has passed (an expiry, a freshness bound), so that
 * a loaded machine cannot move it. `jest.useRealTimers()` gives the real clock back.
 */
export function freezeDateAt(now: number): void {
  jest.useFakeTimers({
    now,
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
}
