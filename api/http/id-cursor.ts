import { z } from 'zod';
import { InvalidRequestError } from '../errors.js';

/**
 * Keyset cursors for lists ordered by UUIDv7 id: opaque to callers, inside the id of the last
 * item of the previous page. A cursor that this encoder did not make is refused.
 */
export const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!z.uuid().safeParse(id).success || encodeCursor(id) !== cursor) {
    throw new InvalidRequestError('Invalid request query (cursor: not a cursor from this list).', [
      { path: 'cursor', message: 'not a cursor from this list' },
    ]);
  }
  return id;
}

/**
 * The paging parameters every list takes: up to 100 items, 50 by default, and the cursor (at
 * most 4096 characters) of the previous page, named as the list names it.
 */
export function pageQuery(cursorName: 'cursor' | 'nextCursor') {
  return {
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z
      .string()
      .max(4096)
      .optional()
      .meta({ description: `The \`${cursorName}\` of the previous page` }),
  };
}

/** The page to show and the cursor of the next, from a query that asked for one row more. */
export function page<T extends { id: string }>(
  rows: T[],
  limit: number,
): { items: T[]; cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, cursor: rows.length > limit && last ? encodeCursor(last.id) : null };
}
