import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Where the tests keep the programs they install on first use (a Node 22 binary, MCP Inspector
 * versions): one folder per machine, outside the checkout, as npm keeps its own cache. Each entry
 * is named by its exact version and renamed into place only once complete, so checkouts and
 * concurrent runs share them safely; in a checkout-local folder a fresh clone (every CI run)
 * downloaded and unpacked them all again, the suite's costliest set-up. GATEHOUSE_TEST_TOOLS
 * names another folder.
 */
export function testToolsDir(): string {
  const chosen = process.env.GATEHOUSE_TEST_TOOLS;
  if (chosen) return path.resolve(chosen);
  const cache = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  return path.join(cache, 'gatehouse', 'test-tools');
}
