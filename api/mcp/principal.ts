import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import { MCP_SECRET_PATTERN, findMcpSessionBySecret } from '../../activities/db/mcp-sessions.js';
import type { Sql } from '../../infra/database/client.js';
import { ApiError } from '../errors.js';
import { callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { parse } from '../http/validate.js';

/** Who is at the other end of an MCP request, for whom, and what the session lets it see. */
export interface McpPrincipal {
  caller: Caller;
  userExternalId: string;
  /** The minted session's id; null for a plain API key. */
  sessionId: string | null;
  /** null: no filter. */
  apps: readonly string[] | null;
  /** null: no filter; `<app>.<action>` names. */
  actions: readonly string[] | null;
  includeUnconnectedApps: boolean;
}

/**
 * 401 with RFC 6750's `invalid_token`, so an MCP client knows to ask for a new address rather
 * than retry: the session is unknown, expired, revoked, or its minting key is.
 */
function sessionRefused(description: string): ApiError {
  return new ApiError(
    'invalid_api_key',
    `${description} Ask the backend that gave you this address for a new one.`,
    {},
    {
      'WWW-Authenticate': `Bearer realm="gatehouse", error="invalid_token", error_description="${description}"`,
    },
  );
}

/** A session minted by `POST /v1/mcp/sessions`, recognised by the secret in its address. */
export async function sessionPrincipal(sql: Sql, secret: string): Promise<McpPrincipal> {
  const found = MCP_SECRET_PATTERN.test(secret) ? await findMcpSessionBySecret(sql, secret) : null;
  if (!found) throw sessionRefused('This MCP address is unknown.');
  const { session, caller } = found;
  if (session.revokedAt !== null) throw sessionRefused('This MCP session was revoked.');
  if (session.expiresAt.getTime() <= Date.now()) {
    throw sessionRefused('This MCP session has expired.');
  }
  // The session acts as its key: a revoked key takes its sessions with it.
  if (!caller) throw sessionRefused('The key that minted this MCP session was revoked.');
  return {
    caller,
    userExternalId: session.userExternalId,
    sessionId: session.id,
    apps: session.apps,
    actions: session.actions,
    includeUnconnectedApps: session.includeUnconnectedApps,
  };
}

const serviceUserHeader = z.strictObject({ 'service-user': externalUserId });

/**
 * A trusted backend that speaks MCP itself: its API key (already recognised by `authenticate`)
 * and the user named in `Service-User`, as for the proxy. No filters, and only the apps the
 * user has connected.
 */
export function keyPrincipal(req: Request, res: Response): McpPrincipal {
  const { 'service-user': user } = parse(
    serviceUserHeader,
    { 'service-user': req.get('service-user') },
    'header',
  );
  return {
    caller: callerOf(res),
    userExternalId: user,
    sessionId: null,
    apps: null,
    actions: null,
    includeUnconnectedApps: false,
  };
}
