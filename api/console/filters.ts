import { z } from 'zod';
import { decodeCursor } from '../http/id-cursor.js';

/**
 * A console list's filter: what a GET form sends, empty fields meaning "any". Values are bounded
 * like the API's; a cursor must be one this list made.
 */
const field = z
  .string()
  .max(200)
  .transform((value) => value.trim())
  .transform((value) => (value === '' ? undefined : value))
  .optional();

export const cursorField = z
  .string()
  .max(4096)
  .transform((value, ctx) => {
    if (value === '') return undefined;
    try {
      return decodeCursor(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not a cursor from this list' });
      return z.NEVER;
    }
  })
  .optional();

export const filterField = field;

/** The query of a list page, or null when it cannot be read (the page says so; nothing else). */
export function readFilters<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> | null {
  const parsed = schema.safeParse(query);
  return parsed.success ? parsed.data : null;
}
