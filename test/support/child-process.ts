import { readFile, readdir } from 'node:fs/promises';

function containsRun(haystack: string[], needle: string[]): boolean {
  return haystack.some((_, start) => needle.every((arg, i) => haystack[start + i] === arg));
}

/**
 * The pid of a child of this process (or of `parent`, a process it started) whose command line
 * holds `args` in a row (e.g. the Temporal dev server this test file started: `['--port',
 * '7345']`), so a test can pause it with SIGSTOP. Only direct children are considered: a test
 * never signals a process it did not start.
 */
export async function childPidWith(args: string[], parent = process.pid): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // "pid (command) state ppid …": the command may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (containsRun(cmdline, args)) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  throw new Error(`no child process of ${String(parent)} runs with ${args.join(' ')}`);
}
