import { Router } from 'express';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import { findConnection, readTokens, type Connection } from '../../activities/db/connections.js';
import { readCredential } from '../../activities/db/credential-connections.js';
import { needsRefresh, type RefreshResult } from '../../workflows/connection-types.js';
import type { ApiDeps } from '../deps.js';
import { connectionExpiredError, reconnectLinkFor } from '../connect/links.js';
import { ApiError, ConflictError, NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody } from '../http/validate.js';
import { registerConnectedUserOperation, type ErrorExample } from '../openapi/registry.js';
import {
  connectionSchema,
  presentConnection,
  presentCredentialExport,
  presentReconnectLink,
  presentTokenExport,
  reconnectLinkSchema,
  refreshResultSchema,
  revokedSchema,
  tokenExportSchema,
} from '../presenters/connections.js';
import { connectionWorkflowsFor } from '../temporal/connection-workflows.js';

const connectionPath = z.strictObject({ id: uuidString() });

const unknownConnection: ErrorExample = {
  when: 'unknown connection',
  error: new NotFoundError('Connection'),
};
const revokedConnection: ErrorExample = {
  when: 'revoked',
  error: new ConflictError(
    'The connection is revoked; the user must connect again with a new link.',
  ),
};
const tokenEndpointDown: ErrorExample = {
  when: "the app's token endpoint is down",
  error: new ApiError(
    'upstream_unavailable',
    'The token endpoint of acme could not be reached; retry later.',
    { upstream_status: 503 },
  ),
};

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/connections/{id}',
  operationId: 'get_connection',
  summary: 'Get a connection',
  description:
    'Its status (`active`, `expired`, `revoked`), granted scopes and token freshness; never the tokens.',
  request: { params: connectionPath },
  response: connectionSchema,
  errors: [],
  errorExamples: [unknownConnection],
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/connections/{id}',
  operationId: 'revoke_connection',
  summary: 'Revoke a connection',
  description:
    'Revokes the tokens at the app too, where the app offers revocation, and deletes them here. Revoking a revoked connection answers the same again.',
  request: { params: connectionPath },
  response: revokedSchema,
  errors: [],
  requires: { operation: 'write' },
  errorExamples: [unknownConnection],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/connections/{id}/export',
  operationId: 'export_connection_tokens',
  summary: 'Export the connection’s tokens',
  description:
    'For calling the app yourself. An OAuth connection (`auth_kind: oauth2`) gives its tokens, the access token refreshed first when it is about to expire; a credential connection (`auth_kind: credential`) gives what the user entered, by `scheme`: an API key with where it goes, a bearer token, or a username and password. Only a full-access key may export; prefer actions or the proxy, which never hand tokens out.',
  request: { params: connectionPath },
  response: tokenExportSchema,
  errors: ['connection_expired', 'auth_config_required'],
  requires: { operation: 'export' },
  errorExamples: [unknownConnection, revokedConnection, tokenEndpointDown],
});
registerConnectedUserOperation({
  method: 'post',
  path: '/v1/connections/{id}/refresh',
  operationId: 'refresh_connection',
  summary: 'Refresh the tokens now',
  description:
    'Gatehouse refreshes tokens on its own before they expire; this forces it. Concurrent refreshes of one connection share one token request. A credential connection has nothing to refresh (409 `conflict`).',
  request: { params: connectionPath },
  response: refreshResultSchema,
  errors: ['connection_expired', 'auth_config_required'],
  requires: { operation: 'write' },
  errorExamples: [unknownConnection, revokedConnection, tokenEndpointDown],
});
registerConnectedUserOperation({
  method: 'post',
  path: '/v1/connections/{id}/reconnect-link',
  operationId: 'create_reconnect_link',
  summary: 'Get a reconnect link for the connection',
  description:
    'A hosted connect link that renews this connection once the app has stopped accepting its refresh token. It works once and is valid for 7 days; until used, asking again gives the same link.',
  request: { params: connectionPath },
  response: reconnectLinkSchema,
  status: 201,
  errors: [],
  requires: { operation: 'write' },
  errorExamples: [unknownConnection, revokedConnection],
});

/**
 * The operator's MCP OAuth client was refused at a refresh: they are told which, and how to fix it;
 * the connection is left as it was, so fixing the client is enough.
 */
function refusedClientError(
  connection: Connection,
  refused: NonNullable<RefreshResult['refusedClient']>,
): ApiError {
  const { mcpOAuthClientId: id, clientId } = refused;
  return new ApiError(
    'auth_config_required',
    `The authorization server of ${connection.app} refused MCP OAuth client ${id} (client_id ${clientId}) as invalid_client: check its secret (POST /v1/mcp-oauth-clients/${id}/rotate) and its registration at the server. The connection is unchanged.`,
    { connection_id: connection.id, mcp_oauth_client_id: id },
  );
}

/** A credential the user entered has nothing to refresh: it is used as entered until replaced. */
function notRefreshedError(connection: Connection): ConflictError {
  return new ConflictError(
    `Connection ${connection.id} holds a credential the user entered, which is not refreshed: it is used as entered until the user enters another (POST /v1/connections/${connection.id}/reconnect-link).`,
    { connection_id: connection.id },
  );
}

/** A user's connections: read, revoke, export, refresh and reconnect. */
export function connectionsRoutes(deps: ApiDeps): Router {
  const router = Router();
  const workflows = connectionWorkflowsFor(deps);

  // An id that is no UUID names no connection: 404, like an unknown or another environment's.
  async function connectionOf(caller: Caller, id: unknown): Promise<Connection> {
    const parsed = connectionPath.shape.id.safeParse(id);
    const connection = parsed.success
      ? await findConnection(deps.sql, caller.environmentId, parsed.data)
      : null;
    if (!connection) throw new NotFoundError('Connection');
    return connection;
  }

  const revokedError = () =>
    new ConflictError('The connection is revoked; the user must connect again with a new link.');

  async function assertLive(connection: Connection): Promise<void> {
    if (connection.status === 'revoked') throw revokedError();
    if (connection.status === 'expired')
      throw await connectionExpiredError(deps.sql, deps.config, connection);
  }

  async function assertRefreshed(connection: Connection, result: RefreshResult): Promise<void> {
    if (result.status === 'missing') throw new NotFoundError('Connection');
    if (result.refusedClient) throw refusedClientError(connection, result.refusedClient);
    if (result.status === 'unavailable') {
      throw new ApiError(
        'upstream_unavailable',
        `The token endpoint of ${connection.app} could not be reached; retry later.`,
        { upstream_status: 503 },
      );
    }
    if (result.status !== 'active') await assertLive({ ...connection, status: result.status });
  }

  router.get('/v1/connections/:id', authorize({ operation: 'read' }), async (req, res) => {
    res.json(presentConnection(await connectionOf(callerOf(res), req.params.id)));
  });

  router.delete('/v1/connections/:id', authorize({ operation: 'write' }), async (req, res) => {
    const connection = await connectionOf(callerOf(res), req.params.id);
    if (connection.status !== 'revoked') await workflows.revoke(connection.id);
    res.json({ id: connection.id, status: 'revoked' });
  });

  router.get('/v1/connections/:id/export', authorize({ operation: 'export' }), async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const connection = await connectionOf(callerOf(res), req.params.id);
    await assertLive(connection);
    if (connection.authKind === 'credential') {
      const credential = await readCredential(deps.sql, deps.config.encryption, connection.id);
      // Erased only by a revocation, which may have landed since the check above.
      if (!credential) throw revokedError();
      res.json(presentCredentialExport(connection, credential));
      return;
    }
    if (needsRefresh(connection.accessTokenExpiresAt, new Date())) {
      await assertRefreshed(connection, await workflows.refresh(connection, false));
    }
    const tokens = await readTokens(deps.sql, deps.config.encryption, connection.id);
    // Tokens are dropped only by a revocation, which may have landed since the check above.
    if (!tokens) throw revokedError();
    res.json(presentTokenExport(connection, tokens));
  });

  router.post(
    '/v1/connections/:id/refresh',
    authorize({ operation: 'write' }),
    async (req, res) => {
      expectNoBody(req);
      const connection = await connectionOf(callerOf(res), req.params.id);
      await assertLive(connection);
      if (connection.authKind === 'credential') throw notRefreshedError(connection);
      const result = await workflows.refresh(connection, true);
      await assertRefreshed(connection, result);
      res.json({ id: connection.id, status: 'active', last_refreshed_at: result.lastRefreshedAt });
    },
  );

  router.post(
    '/v1/connections/:id/reconnect-link',
    authorize({ operation: 'write' }),
    async (req, res) => {
      expectNoBody(req);
      const connection = await connectionOf(callerOf(res), req.params.id);
      if (connection.status === 'revoked') throw revokedError();
      const link = await reconnectLinkFor(deps.sql, deps.config, connection);
      res.status(201).json(presentReconnectLink(link));
    },
  );

  return router;
}
