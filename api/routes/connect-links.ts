import { Router } from 'express';
import { z } from 'zod';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { findMcpApp } from '../../activities/db/mcp-apps.js';
import { chooseClientForNewConnection } from '../../activities/oauth/credentials.js';
import { findApp } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../deps.js';
import { newConnectLink } from '../connect/links.js';
import { assertMcpAppConnectable } from '../connect/mcp-link-readiness.js';
import { ApiError, ConflictError, InvalidRequestError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';

// Control characters (Unicode Cc), without the `u` flag so the OpenAPI pattern stays portable.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const noControl = /^[^\u0000-\u001f\u007f-\u009f]*$/;

export const createLinkBody = z
  .strictObject({
    user: externalUserId.meta({
      description: 'Your own id for the end user; later calls name the user by it.',
    }),
    customer: z
      .string()
      .min(1)
      .max(256)
      .regex(noControl, 'must not contain control characters')
      .optional(),
    app: z.string().min(1).max(100),
    redirect_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .meta({ description: 'Where the user returns after connecting (else a success page).' }),
  })
  .meta({ id: 'CreateConnectLink' });

const linkSchema = z
  .object({ id: z.string(), url: z.url(), expires_at: z.iso.datetime() })
  .meta({ id: 'ConnectLink' });

registerConnectedUserOperation({
  method: 'post',
  path: '/v1/connect/links',
  operationId: 'create_connect_link',
  summary: 'Create a hosted connect link for an end user and an app',
  description:
    'Send your user to `url`: a page branded with your connect settings takes them to the app to allow access, then back to `redirect_url` (with `status=connected`, `connection_id` and `app` added to its query) or to a success page. ' +
    'The link is valid for one hour and works once. The user is created on their first link; name them by `user` in every later call.',
  request: {
    body: { content: { 'application/json': { schema: createLinkBody } }, required: true },
  },
  response: linkSchema,
  status: 201,
  errors: ['auth_config_required', 'conflict', 'upstream_unavailable'],
  requires: { operation: 'write' },
  errorExamples: [
    {
      when: 'unknown app',
      error: new InvalidRequestError('Unknown app "acmee".', [
        { path: 'app', message: 'unknown app' },
      ]),
    },
  ],
});

/** `POST /v1/connect/links`: finds or creates the user, then issues a single-use link. */
export function connectLinkRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.post('/v1/connect/links', authorize({ operation: 'write' }), async (req, res) => {
    const caller = callerOf(res);
    const body = parse(createLinkBody, req.body, 'body');
    const catalogApp = findApp(body.app);
    const mcpApp = catalogApp ? null : await findMcpApp(deps.sql, caller.environmentId, body.app);
    const app = catalogApp ?? mcpApp;
    if (!app) {
      throw new InvalidRequestError(`Unknown app "${body.app}".`, [
        { path: 'app', message: 'unknown app' },
      ]);
    }
    // Checked now so the caller learns at once, not the end user on a broken page.
    // A remote MCP server that asks for no authorization serves every user as it is.
    if (mcpApp?.auth === 'none') {
      throw new ConflictError(
        `App "${mcpApp.id}" is a remote MCP server that asks for no authorization: its users need no connection, and its tools can be called for any user as they are.`,
        { app: mcpApp.id },
      );
    }
    if (mcpApp) {
      await assertMcpAppConnectable(deps, caller.environmentId, mcpApp.id);
    } else if (
      !(await chooseClientForNewConnection(deps.sql, deps.config, caller.environmentId, app.id))
    ) {
      throw new ApiError(
        'auth_config_required',
        `No OAuth client for "${app.id}" in environment "${caller.environmentName}": register one at the app with the redirect URI that GET /v1/apps/${app.id} shows, add it with POST /v1/auth-configs, or enable funded access.`,
        { app: app.id },
      );
    }
    const user = await upsertConnectedUser(
      deps.sql,
      caller.environmentId,
      body.user,
      body.customer,
    );
    const link = await newConnectLink(deps.sql, deps.config, {
      environmentId: caller.environmentId,
      connectedUserId: user.id,
      app: app.id,
      ...(body.redirect_url ? { redirectUrl: body.redirect_url } : {}),
    });
    res.status(201).json(link);
  });
  return router;
}
