import { Router } from 'express';
import { z } from 'zod';
import {
  createAuthConfig,
  disableAuthConfig,
  HINT_MIN_SECRET_LENGTH,
  listAuthConfigs,
  type AuthConfig,
} from '../../activities/db/auth-configs.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import { findOpenApiOAuthScheme } from '../../activities/openapi-registry/oauth-scheme.js';
import { findApp } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../deps.js';
import { catalogApp, knownAppIds } from '../catalog-app.js';
import { ConflictError, InvalidRequestError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { decodeCursor, page, pageQuery } from '../http/id-cursor.js';
import { expectNoBody, parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';
import { redirectUriField } from '../presenters/apps.js';

export const createAuthConfigBody = z
  .strictObject({
    // The management interface sets no minimum for `app`; an empty name passes here and is then
    // refused like any other name that is not an app.
    app: z
      .string()
      .max(100)
      .meta({
        description: `A catalog app (${knownAppIds().join(', ')}), or an OpenAPI app of the environment whose users connect through its document's OAuth 2.0 flow`,
      }),
    name: z.string().min(1).max(100).meta({ description: 'Your label for this client' }),
    clientId: z.string().min(1).max(300),
    clientSecret: z.string().min(1).max(4000).meta({
      writeOnly: true,
      description: 'Stored encrypted and never returned; responses show `clientSecretHint`.',
    }),
  })
  .meta({ id: 'create_auth_config_input' });

export const listAuthConfigsQuery = z
  .strictObject({
    ...pageQuery('nextCursor'),
  })
  .meta({ id: 'list_auth_configs_input' });

const authConfigPath = z.strictObject({
  id: z.string().min(1).max(256).meta({ description: 'The auth config id' }),
});

const authConfigOutput = z.object({
  id: z.string(),
  app: z.string(),
  name: z.string(),
  clientId: z.string(),
  clientSecretHint: z
    .string()
    .nullable()
    .meta({
      description: `The secret's last four characters; null for secrets under ${HINT_MIN_SECRET_LENGTH} characters, where four would give too much away.`,
    }),
  status: z.enum(['enabled', 'disabled']).meta({
    description:
      '`disabled`: no new connection uses it; connections made with it keep refreshing with it.',
  }),
  created_at: z.iso.datetime(),
  disabled_at: z.iso.datetime().nullable(),
  // Beside the client it belongs with: an OAuth client that does not list it fails every connect.
  redirect_uri: redirectUriField,
});

type AuthConfigOutput = z.infer<typeof authConfigOutput>;

registerManagementOperation({
  method: 'post',
  path: '/v1/auth-configs',
  operationId: 'create_auth_config',
  summary: 'Add an OAuth client for an app',
  description:
    "New connections to the app use its newest enabled auth config. Register the answer's `redirect_uri` with the client at the app. The secret is stored encrypted and never returned.",
  scope: 'auth_configs:manage',
  request: {
    body: { content: { 'application/json': { schema: createAuthConfigBody } }, required: true },
  },
  output: authConfigOutput.meta({ id: 'create_auth_config_output' }),
});

const listOutput = z.array(authConfigOutput).meta({ id: 'list_auth_configs_output' });

registerManagementOperation({
  method: 'get',
  path: '/v1/auth-configs',
  operationId: 'list_auth_configs',
  summary: 'List the auth configs of the environment, newest first',
  description: 'Enabled and disabled ones; pass `nextCursor` as `cursor` to get the next page.',
  scope: 'auth_configs:read',
  request: { query: listAuthConfigsQuery },
  output: listOutput,
  envelope: {
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
  },
});

// This list answers `nextCursor` beside `data`, which the shared helper's `{data: output}` envelope
// cannot say; the registered 200 response is widened here.
registerManagementOperation({
  method: 'post',
  path: '/v1/auth-configs/{id}/disable',
  operationId: 'disable_auth_config',
  summary: 'Disable an auth config',
  description:
    'New connections no longer use it; the connections made with it keep refreshing with it. It cannot be enabled again: add a new one instead.',
  errorExamples: [
    {
      when: 'unknown auth config',
      error: new NotFoundError('Auth config "0198f2a1-6c0d-7f3e-8b9a-1e2d3c4b5a69"'),
    },
    {
      when: 'already disabled',
      error: new ConflictError(
        'Auth config "0198f2a1-6c0d-7f3e-8b9a-1e2d3c4b5a69" is already disabled.',
        {
          disabled_at: '2025-06-01T09:30:00.000Z',
        },
      ),
    },
  ],
  scope: 'auth_configs:manage',
  request: { params: authConfigPath },
  output: authConfigOutput.meta({ id: 'disable_auth_config_output' }),
});

function present(config: AuthConfig, redirectUri: string): AuthConfigOutput {
  return {
    id: config.id,
    app: config.app,
    name: config.name,
    clientId: config.clientId,
    clientSecretHint: config.clientSecretHint,
    status: config.enabled ? 'enabled' : 'disabled',
    created_at: config.createdAt.toISOString(),
    disabled_at: config.disabledAt?.toISOString() ?? null,
    redirect_uri: redirectUri,
  };
}

/**
 * The app an auth config is for: a catalog app, or an OpenAPI app of the environment whose users
 * connect through its accepted document's OAuth 2.0 flow. Any other OpenAPI app is refused
 * naming how its users connect instead: a client there would never be used.
 */
async function oauthClientApp(deps: ApiDeps, environmentId: string, id: string): Promise<string> {
  const openapi = findApp(id) ? null : await findOpenApiOAuthScheme(deps.sql, environmentId, id);
  if (openapi?.kind === 'oauth2') return openapi.scheme.appId;
  if (openapi?.kind === 'other') {
    const message = `OpenAPI app "${id}" takes no OAuth client: ${openapi.reason}.`;
    throw new InvalidRequestError(message, [{ path: 'app', message }]);
  }
  return catalogApp(id).id;
}

/** The management operations create_auth_config / list_auth_configs / disable_auth_config. */
export function authConfigRoutes(deps: ApiDeps): Router {
  const router = Router();
  const redirectUri = connectRedirectUri(deps.config.api);

  router.post(
    '/v1/auth-configs',
    authorize({ operation: 'write', scope: 'auth_configs:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const body = parse(createAuthConfigBody, req.body, 'body');
      const app = await oauthClientApp(deps, caller.environmentId, body.app);
      const created = await createAuthConfig(deps.sql, deps.config.encryption, {
        environmentId: caller.environmentId,
        app,
        name: body.name,
        clientId: body.clientId,
        clientSecret: body.clientSecret,
      });
      res.json({ data: present(created, redirectUri) });
    },
  );

  router.get(
    '/v1/auth-configs',
    authorize({ operation: 'read', scope: 'auth_configs:read' }),
    async (req, res) => {
      const caller = callerOf(res);
      const query = parse(listAuthConfigsQuery, req.query, 'query');
      const rows = await listAuthConfigs(deps.sql, caller.environmentId, {
        ...(query.cursor === undefined ? {} : { after: decodeCursor(query.cursor) }),
        // One more than a page tells whether another page follows.
        limit: query.limit + 1,
      });
      const { items, cursor } = page(rows, query.limit);
      res.json({ data: items.map((item) => present(item, redirectUri)), nextCursor: cursor });
    },
  );

  router.post(
    '/v1/auth-configs/:id/disable',
    authorize({ operation: 'write', scope: 'auth_configs:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const { id } = parse(authConfigPath, req.params, 'path');
      expectNoBody(req);
      const result = await disableAuthConfig(deps.sql, caller.environmentId, id);
      switch (result.outcome) {
        case 'not_found':
          throw new NotFoundError(`Auth config "${id}"`);
        case 'already_disabled':
          throw new ConflictError(`Auth config "${id}" is already disabled.`, {
            disabled_at: result.authConfig.disabledAt?.toISOString() ?? null,
          });
        case 'disabled':
          res.json({ data: present(result.authConfig, redirectUri) });
      }
    },
  );

  return router;
}
