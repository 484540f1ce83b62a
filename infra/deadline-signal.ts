/**
 * An AbortSignal for one outbound request: aborted with a `TimeoutError` (as
 * `AbortSignal.timeout` does) once `timeoutMs` has passed, or with a linked signal's reason as
 * soon as one of them aborts. `clear()` ends it; call it in a `finally` once the request's answer
 * has been read, so the timer and the listeners on the linked signals go with the request.
 *
 * Why not `AbortSignal.any([AbortSignal.timeout(ms), ...])`: on Node 20 the timer of
 * `AbortSignal.timeout` refers to its signal only weakly, and so do the sources of a signal
 * `AbortSignal.any` composes, so a garbage collection during the wait collects both and the
 * request is never aborted (an app answering after 75 s was served after 75 s, not refused at
 * 30 s). Here the pending timer holds the controller strongly until it fires or is cleared.
 */
export interface DeadlineSignal {
  readonly signal: AbortSignal;
  clear(): void;
}

export function deadlineSignal(
  timeoutMs: number | null,
  ...linked: readonly (AbortSignal | null | undefined)[]
): DeadlineSignal {
  const controller = new AbortController();
  const unlinks: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  const clear = () => {
    clearTimeout(timer);
    for (const unlink of unlinks.splice(0)) unlink();
  };
  const abort = (reason: unknown) => {
    clear();
    controller.abort(reason);
  };
  for (const signal of linked) {
    if (!signal) continue;
    if (signal.aborted) {
      abort(signal.reason);
      return { signal: controller.signal, clear };
    }
    const onAbort = () => {
      abort(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    unlinks.push(() => {
      signal.removeEventListener('abort', onAbort);
    });
  }
  if (timeoutMs !== null) {
    timer = setTimeout(
      () => {
        abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      },
      Math.max(1, Math.ceil(timeoutMs)),
    );
  }
  return { signal: controller.signal, clear };
}
