import { Router } from 'express';
import { z } from 'zod';
import { findEnvironmentApp, listEnvironmentApps } from '../../activities/apps/directory.js';
import { connectReadiness } from '../../activities/oauth/connect-readiness.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { appSchema, presentApp } from '../presenters/apps.js';
import { presentRemoteApp, remoteAppSchema } from '../presenters/mcp-apps.js';

// The catalog is small: no paging, and no parameter yet; an unknown one is refused, not ignored.
const listQuery = z.strictObject({});
const appPath = z.strictObject({
  app: z.string().min(1).max(100).meta({ description: 'The app key, e.g. `github`' }),
});

// Which apps have an auth config is what `list_auth_configs` tells, so it takes the same scope;
// every key has it by default, so any default key can read the catalog.
const requirement = { operation: 'read', scope: 'auth_configs:read' } as const;

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/apps',
  operationId: 'list_apps',
  summary: 'List the apps of the catalog, then the remote MCP apps of the environment',
  description:
    'Per catalog app: the redirect URI to register with your OAuth client at the app (`redirect_uri`), the scopes the connect flow asks for, its actions, and whether this environment can connect it yet (`oauth_client`; null until you create an auth config). Per remote MCP server registered as an app (`auth_kind: "mcp"`): its server URL, whether users connect (`auth`), its tools with their grades and whether they may be called, and the snapshot state. Needs scope `auth_configs:read`, which every key has by default.',
  response: z.object({ data: z.array(z.union([appSchema, remoteAppSchema])) }),
  errors: [401, 403],
  requires: requirement,
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/apps/{app}',
  operationId: 'get_app',
  summary: 'Get one app, with the redirect URI to register at it',
  description:
    'The `redirect_uri` is `<PUBLIC_URL>/connect/callback`, exactly what the connect flow sends the app; register it as the callback of the OAuth client you then add with `POST /v1/auth-configs`. Needs scope `auth_configs:read`.',
  request: { params: appPath },
  response: z.union([appSchema, remoteAppSchema]),
  errors: [400, 401, 403, 404],
  requires: requirement,
});

/** `GET /v1/apps` and `GET /v1/apps/{app}`: what setting up an app takes, and where it stands. */
export function appRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get('/v1/apps', authorize(requirement), async (req, res) => {
    const caller = callerOf(res);
    parse(listQuery, req.query, 'query');
    const apps = await listEnvironmentApps(deps.sql, caller.environmentId);
    const catalog = apps.flatMap((entry) => (entry.kind === 'catalog' ? [entry.app] : []));
    const readiness = await connectReadiness(
      deps.sql,
      deps.config,
      caller.environmentId,
      catalog.map((app) => app.id),
    );
    // OpenAPI apps are described by `GET /v1/openapi-apps`, in their own shape.
    res.json({
      data: apps
        .filter((entry) => entry.kind !== 'openapi')
        .map((entry) =>
          entry.kind === 'catalog'
            ? presentApp(entry.app, deps.config, readiness.get(entry.id))
            : presentRemoteApp(entry.standing),
        ),
    });
  });
  router.get('/v1/apps/:app', authorize(requirement), async (req, res) => {
    const caller = callerOf(res);
    const { app: id } = parse(appPath, req.params, 'path');
    const entry = await findEnvironmentApp(deps.sql, caller.environmentId, id);
    if (!entry) throw new NotFoundError(`App "${id}"`);
    if (entry.kind === 'openapi') {
      throw new NotFoundError(`App "${id}" (an OpenAPI app: GET /v1/openapi-apps/${id})`);
    }
    if (entry.kind === 'mcp') {
      res.json(presentRemoteApp(entry.standing));
      return;
    }
    const readiness = await connectReadiness(deps.sql, deps.config, caller.environmentId, [
      entry.id,
    ]);
    res.json(presentApp(entry.app, deps.config, readiness.get(entry.id)));
  });
  return router;
}
