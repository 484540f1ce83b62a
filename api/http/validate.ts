import type { Request } from 'express';
import { z } from 'zod';
import { InvalidRequestError, type Issue } from '../errors.js';

export type Location = 'body' | 'query' | 'path' | 'header';

function issuesOf(error: z.ZodError, location: Location): Issue[] {
  return error.issues.flatMap((issue): Issue[] => {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: base ? `${base}.${key}` : key,
        message: `unknown ${location === 'query' ? 'parameter' : 'field'}`,
      }));
    }
    return [{ path: base || location, message: issue.message }];
  });
}

/** Deeper than any request a person means to send: refused before anything walks it. */
const MAX_DEPTH = 256;

/** A lone UTF-16 surrogate: JSON's `\ud83d` escape makes one, and no Unicode text holds one. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a string cannot be stored as it is, or null: Postgres text and jsonb refuse NUL and lone
 * surrogates, and a client's mistake must never become a 500 (or a U+FFFD in its place).
 */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character';
  if (LONE_SURROGATE.test(text))
    return 'must not contain a lone UTF-16 surrogate (malformed Unicode)';
  return null;
}

export type Malformed = { kind: 'depth' } | { kind: 'text'; path: string[]; message: string };

/**
 * The first thing in `value` that no request may hold: nesting beyond MAX_DEPTH, or a string or
 * property name that cannot be stored (a bad property name is reported at its object). One walk,
 * with an explicit stack, so a hostile body cannot exhaust the call stack.
 */
export function malformedIn(value: unknown): Malformed | null {
  const stack: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value === 'string') {
      const message = unstorable(item.value);
      if (message) return { kind: 'text', path: item.path, message };
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.path.length >= MAX_DEPTH) return { kind: 'depth' };
    for (const [key, child] of Object.entries(item.value)) {
      const message = unstorable(key);
      if (message) return { kind: 'text', path: item.path, message };
      stack.push({ value: child, path: [...item.path, key] });
    }
  }
  return null;
}

/** The error for what `malformedIn` found, naming the field (or the whole `location`). */
export function malformedError(found: Malformed, location: Location): InvalidRequestError {
  if (found.kind === 'depth') {
    return new InvalidRequestError(
      `The request body nests deeper than ${String(MAX_DEPTH)} levels.`,
      [{ path: 'body', message: `must not nest deeper than ${String(MAX_DEPTH)} levels` }],
    );
  }
  return invalid(location, [{ path: found.path.join('.') || location, message: found.message }]);
}

function invalid(location: Location, issues: Issue[]): InvalidRequestError {
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid input';
  return new InvalidRequestError(`Invalid request ${location} (${summary}).`, issues);
}

/** Parses one part of a request, turning every zod issue into a named, readable one. */
export function parse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: Location,
): z.infer<S> {
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (!result.success) throw invalid(location, issuesOf(result.error, location));
  // JSON bodies were walked once, as they were parsed (json-body.ts).
  const found = location === 'body' ? null : malformedIn(result.data);
  if (found) throw malformedError(found, location);
  return result.data;
}

const emptyBody = z.strictObject({});

/**
 * For operations that take no body: none, or `{}`, is fine; anything else is refused rather
 * than ignored, so a caller who meant to send options learns they were not read.
 */
export function expectNoBody(req: Request): void {
  if (req.body !== undefined) {
    parse(emptyBody, req.body, 'body');
    return;
  }
  // A body the JSON parser skipped (another media type, or chunked) is a body all the same.
  if (Number(req.get('content-length') ?? '0') > 0 || req.get('transfer-encoding')) {
    throw new InvalidRequestError('This operation takes no request body.', [
      { path: 'body', message: 'must be empty' },
    ]);
  }
}
