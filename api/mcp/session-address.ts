import type { Request } from 'express';
import { InvalidApiKeyError } from '../errors.js';

/**
 * A minted session's address: its token in the path, then `/mcp`. Some MCP clients treat an address
 * whose path does not end in `/mcp` as a server's base and replace the path with `/mcp` (the MCP
 * Inspector's CLI 0.15.0, which npx installs on Node 20), which drops the token; an address that
 * ends in `/mcp` is used as given. Addresses minted before, with the token last, keep answering:
 * the final `/mcp` is optional.
 */
export const SESSION_PATH = '/mcp/:secret{/mcp}';

/** The plain-key address: a backend's own key in `Authorization`, the user in `Service-User`. */
export const KEY_PATH = '/mcp';

export function sessionUrl(publicUrl: string, secret: string): string {
  return `${publicUrl}/mcp/${secret}/mcp`;
}

/**
 * What `/mcp` answers a request that brings neither a key nor a token. Such a request is far
 * more often a session address whose token a client dropped than a backend that forgot its
 * key, and "an API key is required" would send the holder of a session address the wrong way.
 */
export const NO_KEY_NOR_SESSION =
  'Neither an API key nor an MCP session token reached this address. If you were given a ' +
  'session address (…/mcp/gkmcp_…/mcp), your MCP client dropped its token on the way: some ' +
  'clients replace a path that does not end in /mcp with /mcp. Give the client the address ' +
  'exactly as POST /v1/mcp/sessions returned it (it ends in /mcp), or ask the backend that gave ' +
  'it to you for a new one. A backend calling with its own key sends ' +
  '"Authorization: Bearer <API key>" and the user in Service-User.';

/** Throws the session-aware refusal when the request carries no credential of any kind. */
export function requireSomeCredential(req: Request): void {
  if (req.get('authorization') === undefined && req.get('x-api-key') === undefined) {
    throw new InvalidApiKeyError(NO_KEY_NOR_SESSION);
  }
}
