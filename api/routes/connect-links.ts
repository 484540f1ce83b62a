import { Router } from 'express';
import { z } from 'zod';
import type { ApiDeps } from '../deps.js';
import { createCheckedConnectLink } from '../connect/new-connect-link.js';
import { InvalidRequestError } from '../errors.js';
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
    const link = await createCheckedConnectLink(
      deps,
      { id: caller.environmentId, name: caller.environmentName },
      {
        user: body.user,
        app: body.app,
        ...(body.customer === undefined ? {} : { customer: body.customer }),
        ...(body.redirect_url ? { redirectUrl: body.redirect_url } : {}),
      },
    );
    res.status(201).json(link);
  });
  return router;
}
