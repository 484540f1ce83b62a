import { dataDir, readLocalState } from '../dev/local-state.js';
import { readRunningStack } from '../dev/running-stack.js';
import { devShellExports } from '../dev/shell-exports.js';

/**
 * `gatehouse env`: the banner's `export …` line for the running `gatehouse dev`, so another
 * terminal gets the right addresses and keys with `eval "$(npx gatehouse env)"`, even when a
 * taken port was replaced. Fails (nothing on stdout, so `eval` sets nothing) when no stack runs.
 */
export async function envCommand(): Promise<string> {
  const running = await readRunningStack();
  if (!running) {
    throw new Error(
      `no gatehouse dev is running with data in ${dataDir}: start it with npm run dev`,
    );
  }
  const state = await readLocalState();
  if (!state?.agentKey || !state.adminKey) {
    throw new Error(`gatehouse dev is running, but ${dataDir} holds no development keys yet`);
  }
  return devShellExports({
    apiUrl: running.apiUrl,
    agentKey: state.agentKey,
    adminKey: state.adminKey,
    mailUrl: running.mailUrl ?? null,
  });
}
