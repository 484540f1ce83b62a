import type { Application, Request } from 'express';

/** The last request the resource API handled, as the app received it. */
export interface ApiRequestRecord {
  method: string;
  /** Still URL-encoded, as it came. */
  path: string;
  /** The raw query without `?`, or null. */
  query: string | null;
  /**
   * Names lower-cased. Without `Authorization`: the admin API that shows this is unauthenticated,
   * and the token is the user's, not the test's.
   */
  headers: Record<string, string>;
}

/** Per app instance, so several demo apps in one process (tests) never see each other's. */
const lastRequests = new WeakMap<Application, ApiRequestRecord>();

/** Lets a test see what a client (Gatehouse) actually sent, beyond what the answer reveals. */
export function rememberApiRequest(req: Request): void {
  const url = req.originalUrl;
  const queryAt = url.indexOf('?');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'authorization') continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  lastRequests.set(req.app, {
    method: req.method,
    path: queryAt === -1 ? url : url.slice(0, queryAt),
    query: queryAt === -1 ? null : url.slice(queryAt + 1),
    headers,
  });
}

export function lastApiRequest(app: Application): ApiRequestRecord | null {
  return lastRequests.get(app) ?? null;
}
