/**
 * A component of `gatehouse dev` that did not start, with what the person at the terminal can
 * do about it. A bare error message ("listen EADDRINUSE …") names neither the
 * component nor a way out; this names both, and the cause stays the original error.
 */
export class DevStartError extends Error {
  constructor(
    /** What failed, as a sentence names it after "the": "API", "demo app", "database", … */
    readonly component: string,
    /** What to do, one or two sentences. */
    readonly remedy: string,
    options: { cause: unknown },
  ) {
    super(`the ${component} failed: ${messageOf(options.cause)}`, options);
    this.name = 'DevStartError';
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * Runs one step of the start, turning its failure into a DevStartError for that component. A
 * DevStartError from deeper down (a more precise diagnosis) passes through unchanged.
 */
export async function startStep<T>(
  component: string,
  remedy: string | ((error: unknown) => string | Promise<string>),
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DevStartError) throw error;
    const advice = typeof remedy === 'string' ? remedy : await remedy(error);
    throw new DevStartError(component, advice, { cause: error });
  }
}

/** Said of every failure, after its own advice: the log keeps what the terminal leaves out. */
const AGAIN = 'Then run `npm run dev` again.';

/** The headline, the same in the terminal and in the log file. */
export function startFailureHeadline(error: unknown): string {
  return error instanceof DevStartError
    ? `gatehouse dev could not start: the ${error.component} failed.`
    : 'gatehouse dev could not start.';
}

/** Of a server that stopped by itself once the stack ran: the same, said of a running stack. */
export function lostServerHeadline(error: DevStartError): string {
  return `gatehouse dev stopped: the ${error.component} stopped by itself.`;
}

/** What the terminal shows: component, cause, remedy, and where the whole record is. */
export function startFailureLines(
  error: unknown,
  logFile: string,
  headline = startFailureHeadline(error),
): string[] {
  const cause = error instanceof DevStartError ? error.cause : error;
  const remedy =
    error instanceof DevStartError
      ? `${error.remedy} ${AGAIN}`
      : `Look at the last records of the log file. ${AGAIN}`;
  const [first, ...rest] = messageOf(cause).trim().split('\n');
  return [
    headline,
    `  Why: ${first ?? ''}`,
    ...rest.map((line) => `       ${line}`),
    `  What to do: ${remedy}`,
    `  Details: ${logFile} (every record as JSON, this one with its stack trace)`,
  ];
}
