import { setTimeout as sleep } from 'node:timers/promises';
import { KEY_CHANGE_BOUND_MS } from '../../api/http/key-cache.js';

/**
 * Asks (`ask` answers a status) until the answer is `status`, the change to a key having
 * committed before `changedAt`. Each API process refuses a revoked or changed key within
 * KEY_CHANGE_BOUND_MS (api/http/key-cache.ts), so this fails if a request sent later than that
 * after the change still had another answer. The API decides on a request after it was sent, and
 * the in-process API reads this process's clock, so the check is exact on a machine of any
 * speed: no request sent within the bound is held against it, however late it is answered.
 */
export async function answeredWithinKeyBound(
  ask: () => Promise<number>,
  status: number,
  changedAt: number,
): Promise<void> {
  for (;;) {
    const sentAt = Date.now();
    const answered = await ask();
    if (answered === status) return;
    if (sentAt - changedAt > KEY_CHANGE_BOUND_MS) {
      throw new Error(
        `a request sent ${String(sentAt - changedAt)} ms after the key changed was answered ${String(answered)}, not ${String(status)}`,
      );
    }
    await sleep(50);
  }
}
