import { Router } from 'express';
import { z } from 'zod';
import { connectReadiness } from '../../activities/oauth/connect-readiness.js';
import { findApp, listApps } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../app.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { appSchema, presentApp } from '../presenters/apps.js';

// The catalog is small: no paging, and no parameter yet; an unknown one is refused, not ignored.
const listQuery = z.strictObject({});
const appPath = z.strictObject({
  app: z.string().min(1).max(100).meta({ description: 'The app key, e.g. `github`' }),
});

// Which apps have an auth config is what `list_auth_configs` tells, so it takes the same scope;
// every key has it by default (DESIGN.md §3), so any default key can read the catalog.
const requirement = { operation: 'read', scope: 'auth_configs:read' } as const;

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/apps',
  operationId: 'list_apps',
  summary: 'List the apps of the catalog',
  description:
    'Per app: the redirect URI to register with your OAuth client at the app (`redirect_uri`), the scopes the connect flow asks for, its actions, and whether this environment can connect it yet (`oauth_client`; null until you create an auth config). Needs scope `auth_configs:read`, which every key has by default.',
  response: z.object({ data: z.array(appSchema) }),
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
  response: appSchema,
  errors: [400, 401, 403, 404],
  requires: requirement,
});

/** `GET /v1/apps` and `GET /v1/apps/{app}`: what setting up an app takes, and where it stands. */
export function appRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get('/v1/apps', authorize(requirement), async (req, res) => {
    const caller = callerOf(res);
    parse(listQuery, req.query, 'query');
    const apps = listApps();
    const readiness = await connectReadiness(
      deps.sql,
      deps.config,
      caller.environmentId,
      apps.map((app) => app.id),
    );
    res.json({ data: apps.map((app) => presentApp(app, deps.config, readiness.get(app.id))) });
  });
  router.get('/v1/apps/:app', authorize(requirement), async (req, res) => {
    const caller = callerOf(res);
    const { app: id } = parse(appPath, req.params, 'path');
    const app = findApp(id);
    if (!app) throw new NotFoundError(`App "${id}"`);
    const readiness = await connectReadiness(deps.sql, deps.config, caller.environmentId, [app.id]);
    res.json(presentApp(app, deps.config, readiness.get(app.id)));
  });
  return router;
}
