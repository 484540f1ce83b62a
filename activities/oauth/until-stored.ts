import { Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../infra/logger.js';

/** About 11 s of tries in all, and never past the activity's own time limit. */
const SAVE_ATTEMPTS = 8;

/**
 * The new tokens exist only in this process until they are stored, and an app that rotates
 * refresh tokens has already spent the old one: were the activity to fail and be retried, it
 * would ask again with a dead refresh token and lose the grant. So the write is retried here.
 */
export async function untilStored<T>(
  logger: Logger,
  connectionId: string,
  save: () => Promise<T>,
): Promise<T> {
  const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = Context.current().info;
  // A second before the limit: past it Temporal would retry the whole activity.
  const deadline = currentAttemptScheduledTimestampMs + startToCloseTimeoutMs - 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await save();
    } catch (error) {
      const pause = Math.min(100 * 2 ** (attempt - 1), 5000);
      if (attempt >= SAVE_ATTEMPTS || Date.now() + pause > deadline) throw error;
      // The message only: a database error can carry the statement's (sealed) parameters.
      logger.warn(
        { connectionId, attempt, error: error instanceof Error ? error.message : 'unknown' },
        'storing refreshed tokens failed; trying again',
      );
      await sleep(pause);
    }
  }
}
