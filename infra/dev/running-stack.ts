import { readFile, rm, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { dataDir } from './local-state.js';

/**
 * Where the running `gatehouse dev` actually listens. The ports in local-state.json are only the
 * preferred ones (a taken port is replaced for that run), so `gatehouse env` reads this file,
 * written once the stack is ready and removed when it stops. It holds no secret: the keys stay
 * in local-state.json.
 */
const runningSchema = z.object({
  pid: z.number().int(),
  apiUrl: z.string(),
  temporalUiUrl: z.string().nullable(),
  temporalAddress: z.string(),
  demoAppUrl: z.string(),
  /** The mail catcher's page; absent in the record of a stack started before it was kept. */
  mailUrl: z.string().optional(),
  /** The embedded Postgres's port for this run (it moves when its preferred one is taken). */
  postgresPort: z.number().int().nullable().optional(),
});

export type RunningStack = z.infer<typeof runningSchema>;

const runningFile = path.join(dataDir, 'dev-running.json');

export async function recordRunningStack(running: RunningStack): Promise<void> {
  const temp = `${runningFile}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(running, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, runningFile);
}

/** Removes the record, unless another process has written its own since. */
export async function clearRunningStack(): Promise<void> {
  const running = await readRecord();
  if (running?.pid === process.pid) await rm(runningFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readRecord(): Promise<RunningStack | null> {
  try {
    return runningSchema.parse(JSON.parse(await readFile(runningFile, 'utf8')));
  } catch {
    // Missing or half-written by an older version: either way nothing is known to be running.
    return null;
  }
}

/** The running stack of this data folder, or null (never started, stopped, or killed). */
export async function readRunningStack(): Promise<RunningStack | null> {
  const running = await readRecord();
  return running && isAlive(running.pid) ? running : null;
}
