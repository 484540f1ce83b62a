import { Router } from 'express';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import { findConnection, readTokens, type Connection } from '../../activities/db/connections.js';
import { needsRefresh, type RefreshResult } from '../../workflows/connection-types.js';
import type { ApiDeps } from '../app.js';
import { connectionExpiredError, reconnectLinkFor } from '../connect/links.js';
import { ApiError, ConflictError, NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import {
  connectionSchema,
  presentConnection,
  presentReconnectLink,
  presentTokenExport,
  reconnectLinkSchema,
  refreshResultSchema,
  revokedSchema,
  tokenExportSchema,
} from '../presenters/connections.js';
import { connectionWorkflowsFor } from '../temporal/connection-workflows.js';

const connectionPath = z.strictObject({ id: uuidString() });

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/connections/{id}',
  operationId: 'get_connection',
  summary: 'Get a connection',
  request: { params: connectionPath },
  response: connectionSchema,
  errors: [401, 403, 404],
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/connections/{id}',
  operationId: 'revoke_connection',
  summary: 'Revoke a connection, at the app too (idempotent)',
  request: { params: connectionPath },
  response: revokedSchema,
  errors: [401, 403, 404],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/connections/{id}/export',
  operationId: 'export_connection_tokens',
  summary:
    'Export the connection’s tokens, refreshed first when about to expire (full-access keys only)',
  request: { params: connectionPath },
  response: tokenExportSchema,
  errors: [401, 403, 404, 409],
});
registerConnectedUserOperation({
  method: 'post',
  path: '/v1/connections/{id}/refresh',
  operationId: 'refresh_connection',
  summary: 'Refresh the tokens now (concurrent calls share one token request)',
  request: { params: connectionPath },
  response: refreshResultSchema,
  errors: [400, 401, 403, 404, 409],
});
registerConnectedUserOperation({
  method: 'post',
  path: '/v1/connections/{id}/reconnect-link',
  operationId: 'create_reconnect_link',
  summary: 'The connection’s reconnect link: single use, valid 7 days, the same until used',
  request: { params: connectionPath },
  response: reconnectLinkSchema,
  status: 201,
  errors: [400, 401, 403, 404, 409],
});

/** SPEC.md §4.1 connections: read, revoke, export, refresh and reconnect. */
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
