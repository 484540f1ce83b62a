import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';

/**
 * What a call writes to Postgres (audit rows, an approval's request) comes from callers and apps,
 * and JSON can carry two things Postgres cannot store: U+0000 (neither text nor jsonb takes it)
 * and a lone UTF-16 surrogate (jsonb refuses its `\ud83d` escape; text silently makes it U+FFFD).
 * Such a string is stored as this prefix followed by the string JSON-escaped, without its quotes:
 * `"Ship \u0000"` is kept as `"$unstorable:Ship \\u0000"`.
 *
 * Why this form rather than a wrapper object or base64: a string stays a string, so the row keeps
 * its shape for readers and filters; object keys can be stored the same way (a key cannot be an
 * object); the escaped text is still readable in the audit log; and
 * `JSON.parse('"' + rest + '"')` gives back the exact string. A string that already starts with
 * the prefix is stored in the same form, so every stored string that starts with it was changed
 * and nothing is ambiguous.
 */
export const UNSTORABLE_PREFIX = '$unstorable:';

/** Whether Postgres stores `text` unchanged: no NUL, and every surrogate in a pair. */
function storable(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return false;
    if (unit >= 0xdc00 && unit <= 0xdfff) return false;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i += 1;
    }
  }
  return true;
}

/** `text` as Postgres can store it, in a text column or inside jsonb. */
export function storableText(text: string): string {
  if (storable(text) && !text.startsWith(UNSTORABLE_PREFIX)) return text;
  return `${UNSTORABLE_PREFIX}${JSON.stringify(text).slice(1, -1)}`;
}

function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (typeof value !== 'object' || value === null) return value;
  // As JSON would write it (a Date as its ISO string), then made storable.
  const { toJSON } = value as { toJSON?: unknown };
  if (typeof toJSON === 'function') return storableValue(toJSON.call(value));
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [storableText(key), storableValue(child)]),
  );
}

/**
 * A JSON value for a jsonb parameter, with every string (keys included) in its storable form.
 * The only way call data goes into jsonb, so no caller's or app's bytes can fail the write.
 */
export function storableJson(sql: Db, value: unknown): ReturnType<Db['json']> {
  return sql.json(storableValue(value) as postgres.JSONValue);
}
