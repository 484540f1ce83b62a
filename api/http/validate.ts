import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { InvalidRequestError, type Issue } from '../errors.js';

type Location = 'body' | 'query' | 'path' | 'header';

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

/**
 * Where `value` holds a NUL character, in a string or a property name: Postgres text and jsonb
 * cannot store one. Walked with an explicit stack (bodies are at most MAX_DEPTH deep anyway).
 */
function nulAt(value: unknown): string[] | null {
  const stack: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value === 'string') {
      if (item.value.includes('\u0000')) return item.path;
      continue;
    }
    if (typeof item.value !== 'object' || item.value === null) continue;
    for (const [key, child] of Object.entries(item.value)) {
      if (key.includes('\u0000')) return item.path;
      stack.push({ value: child, path: [...item.path, key] });
    }
  }
  return null;
}

/** Deepest nesting of objects and arrays in `value`, counted without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue;
    deepest = Math.max(deepest, item.depth + 1);
    if (deepest > MAX_DEPTH) return deepest;
    for (const child of Object.values(item.value))
      stack.push({ value: child, depth: item.depth + 1 });
  }
  return deepest;
}

/**
 * After the JSON parser: a body nested beyond MAX_DEPTH is refused before anything (the
 * idempotency hash, a call fingerprint) walks it.
 */
export const shallowBody: RequestHandler = (req, _res, next) => {
  if (depthOf(req.body) > MAX_DEPTH) {
    throw new InvalidRequestError(
      `The request body nests deeper than ${String(MAX_DEPTH)} levels.`,
      [{ path: 'body', message: `must not nest deeper than ${String(MAX_DEPTH)} levels` }],
    );
  }
  next();
};

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
  const nul = nulAt(result.data);
  if (nul) {
    throw invalid(location, [
      { path: nul.join('.') || location, message: 'must not contain the NUL character' },
    ]);
  }
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
