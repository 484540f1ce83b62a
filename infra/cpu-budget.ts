import vm from 'node:vm';

/**
 * Runs synchronous `work` with V8 terminating it past `timeoutMs`: node:vm's timeout stops the
 * running script whatever it runs inside, a backtracking regular expression included, so work
 * whose cost an outsider chooses (a policy condition, a remote tool's schema pattern against an
 * agent's input) cannot hold the event loop. One context serves every call.
 */
const sandbox = vm.createContext({ work: null as (() => unknown) | null });
const runWork = new vm.Script('work()');

export function withinCpuBudget<T>(work: () => T, timeoutMs: number): T {
  (sandbox as { work: (() => unknown) | null }).work = work;
  try {
    return runWork.runInContext(sandbox, { timeout: Math.max(1, Math.floor(timeoutMs)) }) as T;
  } finally {
    (sandbox as { work: (() => unknown) | null }).work = null;
  }
}

/** Whether an error is `withinCpuBudget`'s: the work ran out of time and was stopped. */
export function isCpuBudgetSpent(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}
