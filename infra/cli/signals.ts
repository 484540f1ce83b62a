import { constants } from 'node:os';

const osSignals: Partial<Record<NodeJS.Signals, number>> = constants.signals;

/** The exit code of a process ended by `signal`, as shells report it: 128 + its number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (osSignals[signal] ?? 0);
}

/**
 * Resolves on the first of `signals`; a second one ends the process at once. `gatehouse dev`
 * adds SIGHUP: its Postgres and Temporal run in process groups of their own, so a closed
 * terminal reaches only it, and it must stop them.
 */
export function untilShutdownSignal(
  signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const name of signals) process.off(name, onSignal);
      for (const name of signals) {
        process.once(name, () => process.exit(signalExitCode(name)));
      }
      resolve(signal);
    };
    for (const name of signals) process.on(name, onSignal);
  });
}
