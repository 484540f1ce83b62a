import type { z } from 'zod';
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

/** Parses one part of a request, turning every zod issue into a named, readable one. */
export function parse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: Location,
): z.infer<S> {
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (result.success) return result.data;
  const issues = issuesOf(result.error, location);
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid input';
  throw new InvalidRequestError(`Invalid request ${location} (${summary}).`, issues);
}
