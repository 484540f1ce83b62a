import { z } from 'zod';
import type { CheckpointPosition } from '../../activities/db/audit-checkpoints.js';

/**
 * The audit trail's cursors are seqs, Postgres bigints: a number of up to 19 digits may still be
 * past the largest one, and Postgres then refuses the whole statement. Checked here, so a client's
 * cursor is a 400 before any byte of an answer (an export's 200 included) is sent.
 */
const MAX_SEQ = 2n ** 63n - 1n;
const MESSAGE = 'must be the cursor of an exported line or checkpoint';

const SEQ = /^\d{1,19}$/;
/** A checkpoint listing's: `<last_seq>`, or `<last_seq>.<id>` after a superseded checkpoint. */
const CHECKPOINT = /^(\d{1,19})(?:\.([0-9a-f-]{36}))?$/;

const isSeq = (digits: string) => SEQ.test(digits) && BigInt(digits) <= MAX_SEQ;

/** An export line's `cursor`: the seq of the last event received. */
export const seqCursor = () => z.string().refine(isSeq, MESSAGE);

/** The `cursor` of a page of `GET /v1/audit/checkpoints`. */
export const checkpointCursor = () =>
  z.string().refine((cursor) => checkpointPosition(cursor) !== null, MESSAGE);

/** The position a checkpoint cursor names; null when it is not one. */
export function checkpointPosition(cursor: string): CheckpointPosition | null {
  const match = CHECKPOINT.exec(cursor);
  const lastSeq = match?.[1];
  if (lastSeq === undefined || !isSeq(lastSeq)) return null;
  const id = match?.[2];
  if (id === undefined) return { lastSeq };
  return z.uuid().safeParse(id).success ? { lastSeq, id } : null;
}

/** The cursor that resumes a checkpoint listing at `position`. */
export function encodeCheckpointCursor(position: CheckpointPosition): string {
  return position.id === undefined ? position.lastSeq : `${position.lastSeq}.${position.id}`;
}
