import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Config } from '../../infra/config.js';
import { deadlineSignal } from '../../infra/deadline-signal.js';
import { mcpServerFetch } from '../mcp-apps/server-fetch.js';

/** One discovery, registration or token request; a slower server fails the step it serves. */
const REQUEST_TIMEOUT_MS = 15_000;

/** Metadata documents and token answers are small; a server sending more is not answered. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * The fetch the SDK's auth functions are given. Which hosts they reach is the MCP server's say
 * (its resource metadata names the authorization server, whose metadata names the endpoints),
 * so they go through the same guarded fetch as the server's own requests (public addresses
 * only, checked on the socket's own address, unless MCP_APPS_ALLOW_PRIVATE), and outside that
 * development setting over https only (OAuth 2.1 §1.5). A refusal fails like fetch does.
 */
export function authFetch(config: Pick<Config, 'mcpApps'>): FetchLike {
  const guarded = mcpServerFetch({
    allowPrivate: config.mcpApps.allowPrivate,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  return async (url, init) => {
    if (!config.mcpApps.allowPrivate && new URL(url).protocol !== 'https:') {
      throw new TypeError('fetch failed', {
        cause: new Error(`${new URL(url).origin}: authorization requests go over https only`),
      });
    }
    const deadline = deadlineSignal(REQUEST_TIMEOUT_MS, init?.signal);
    try {
      const response = await guarded(url, { ...init, signal: deadline.signal });
      // Read whole within the deadline (the SDK reads the body after this returns): these
      // answers are small documents, capped above.
      const bytes = response.body ? new Uint8Array(await response.arrayBuffer()) : null;
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
