import type { Response } from 'express';

/**
 * Aborts once the caller's connection closes before its answer was sent: the caller hung up.
 * Work done only on a waiting caller's behalf (the run after a decision it waited for) must not
 * start for nobody, since nobody would receive what the app answered.
 */
export function callerGone(res: Response): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) gone.abort();
  });
  return gone.signal;
}
