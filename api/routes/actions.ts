import { Router, type Request } from 'express';
import { z } from 'zod';
import { findAction, listActions, type ActionDefinition } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../app.js';
import { actionCall, inputJsonSchema, validInput } from '../calls/action-input.js';
import { callHeaders, callRequestOf } from '../calls/call-context.js';
import { runCall } from '../calls/call-answer.js';
import { refusable, type RefusedCall } from '../calls/refusals.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf, checkAccess } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { callWorkflowsFor } from '../temporal/call-workflows.js';

const listQuery = z.strictObject({ app: z.string().min(1).max(100).optional() });
const actionParam = z.strictObject({ action: z.string().min(3).max(200) });

const actionItem = z
  .object({
    action: z.string(),
    scope: z.enum(['read', 'write', 'destructive']),
    description: z.string(),
  })
  .meta({ id: 'Action' });

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/actions',
  operationId: 'list_actions',
  summary: 'The actions of the catalog, optionally of one app',
  request: { query: listQuery },
  response: z.object({ data: z.array(actionItem) }),
  errors: [400, 401, 403],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/actions/{action}',
  operationId: 'get_action',
  summary: 'One action with the JSON Schema of its input, so an agent knows what to send',
  request: { params: actionParam },
  response: actionItem.extend({ app: z.string(), input_schema: z.record(z.string(), z.unknown()) }),
  errors: [401, 403, 404],
});

const runBody = z
  .strictObject({
    user: externalUserId.meta({ description: "The user's external id" }),
    input: z
      .record(z.string(), z.unknown())
      .default({})
      .meta({ description: "The action's input; see `GET /v1/actions/{action}`" }),
  })
  .meta({ id: 'RunAction' });

registerConnectedUserOperation({
  method: 'post',
  path: '/v1/actions/{action}/run',
  operationId: 'run_action',
  summary:
    "Run an action for a user: the governing policy allows it (the app's answer), holds it " +
    '(`approval_required`; retry the same call once decided) or denies it',
  request: {
    params: actionParam,
    headers: callHeaders,
    body: { content: { 'application/json': { schema: runBody } } },
  },
  response: z
    .object({
      ok: z
        .boolean()
        .meta({ description: 'false when the app answered with a failure of its own' }),
      data: z.unknown(),
      upstream_status: z
        .int()
        .optional()
        .meta({ description: "The app's status when `ok` is false" }),
    })
    .meta({ id: 'ActionResult' }),
  errors: [400, 401, 403, 404, 409, 413, 429, 500, 503, 504],
});

/** A refused run as far as its request tells: the action and user as asked, and the input. */
function refusedRun(req: Request): RefusedCall {
  const asked = typeof req.params.action === 'string' ? req.params.action : '';
  const action = findAction(asked);
  const body: unknown = req.body;
  const fields =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const user = runBody.shape.user.safeParse(fields.user);
  return {
    action: action ? `${action.app}.${action.name}` : asked,
    scope: action?.scope ?? null,
    userExternalId: user.success ? user.data : null,
    request: { user: fields.user ?? null, input: fields.input ?? null },
  };
}

function summary(action: ActionDefinition) {
  return {
    action: `${action.app}.${action.name}`,
    scope: action.scope,
    description: action.description,
  };
}

/** SPEC.md §4.1 `GET /v1/actions`, and each action's input schema (the same zod that validates runs). */
export function actionRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);
  router.get('/v1/actions', authorize({ operation: 'read' }), (req, res) => {
    const query = parse(listQuery, req.query, 'query');
    res.json({ data: listActions(query.app).map(summary) });
  });
  router.get('/v1/actions/:action', authorize({ operation: 'read' }), (req, res) => {
    const { action: name } = parse(actionParam, req.params, 'path');
    const action = findAction(name);
    if (!action) throw new NotFoundError(`Action "${name}"`);
    res.json({
      ...summary(action),
      app: action.app,
      input_schema: inputJsonSchema(action),
    });
  });
  router.post('/v1/actions/:action/run', async (req, res) => {
    // Every refusal up to the call's start is audited (SPEC.md §1), the key's access included.
    const call = await refusable(
      deps,
      req,
      res,
      () => refusedRun(req),
      () => {
        checkAccess(callerOf(res), { operation: 'call' });
        const { action: name } = parse(actionParam, req.params, 'path');
        const action = findAction(name);
        if (!action) throw new NotFoundError(`Action "${name}"`);
        const body = parse(runBody, req.body, 'body');
        const input = validInput(action, body.input);
        return callRequestOf(req, res, body.user, actionCall(action, input), deps.config.approvals);
      },
    );
    await runCall(res, calls, call, deps);
  });
  return router;
}
