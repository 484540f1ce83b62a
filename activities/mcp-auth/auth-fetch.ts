import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Config } from '../../infra/config.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { textNestsDeeperThan } from '../../infra/json-nesting.js';
import { mcpServerFetch } from '../mcp-apps/server-fetch.js';

/** One discovery, registration or token request; a slower server fails the step it serves. */
const REQUEST_TIMEOUT_MS = 15_000;

/** Metadata documents and token answers are small; a server sending more is not answered. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * How deep an authorization document may nest. RFC 8414, RFC 9728 and RFC 7591 documents and
 * token answers are a level or two deep; what the SDK keeps of them is stored (an attempt's
 * discovery) and would overflow JSON.stringify's stack nested thousands deep.
 */
const MAX_DOCUMENT_DEPTH = 32;

/** An authorization document nested deeper than any is: refused before anything reads it. */
export class DocumentTooDeep extends Error {
  override name = 'DocumentTooDeep';
}

/**
 * `fetchFn` for authorization documents: the answer is read whole within `timeoutMs` (null: the
 * caller's signal bounds it), and refused with DocumentTooDeep when it nests too deep. Not a
 * TypeError: the SDK's discovery takes a TypeError for a CORS failure and quietly tries the next
 * place, which would hide why.
 */
export function documentFetch(fetchFn: FetchLike, timeoutMs: number | null): FetchLike {
  return async (url, init) => {
    const deadline = deadlineSignal(timeoutMs, init?.signal);
    try {
      const response = await fetchFn(url, { ...init, signal: deadline.signal });
      // Read whole within the deadline (the SDK reads the body after this returns): these
      // answers are small documents, capped by the fetch.
      const bytes = response.body ? Buffer.from(await response.arrayBuffer()) : null;
      if (bytes && textNestsDeeperThan(bytes.toString('utf8'), MAX_DOCUMENT_DEPTH)) {
        const where = new URL(url);
        throw new DocumentTooDeep(
          `the answer of ${where.origin}${where.pathname} nests deeper than ${String(MAX_DOCUMENT_DEPTH)} levels`,
        );
      }
      return new Response(bytes && bytes.byteLength > 0 ? bytes : null, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } finally {
      deadline.clear();
    }
  };
}

/**
 * The fetch the SDK's auth functions are given. Which hosts they reach is the MCP server's say
 * (its resource metadata names the authorization server, whose metadata names the endpoints),
 * so they go through the same guarded fetch as the server's own requests (public addresses
 * only, checked on the socket's own address, unless MCP_APPS_ALLOW_PRIVATE), and outside that
 * development setting over https only (OAuth 2.1 §1.5). A refusal fails like fetch does.
 */
export function authFetch(config: Pick<Config, 'mcpApps'>): FetchLike {
  const documents = documentFetch(
    mcpServerFetch({
      allowPrivate: config.mcpApps.allowPrivate,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    }),
    REQUEST_TIMEOUT_MS,
  );
  return async (url, init) => {
    if (!config.mcpApps.allowPrivate && new URL(url).protocol !== 'https:') {
      throw new TypeError('fetch failed', {
        cause: new Error(`${new URL(url).origin}: authorization requests go over https only`),
      });
    }
    return documents(url, init);
  };
}
