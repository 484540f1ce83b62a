import { rm } from 'node:fs/promises';
import { TEST_ENV } from './stack-env.js';

export async function stopStack(): Promise<void> {
  const stack = globalThis.gatehouseTestStack;
  for (const stop of (stack?.stops ?? []).reverse()) await stop();
  const dir = process.env[TEST_ENV.dir];
  if (dir) await rm(dir, { recursive: true, force: true });
}
