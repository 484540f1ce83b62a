import { Router, type Request } from 'express';
import { z } from 'zod';
import {
  findEnvironmentAction,
  listEnvironmentActions,
  type DirectoryAction,
} from '../../activities/apps/directory.js';
import type { ApiDeps } from '../deps.js';
import { directoryCall, directoryInputSchema } from '../calls/action-input.js';
import { callHeaders, callRequestOf } from '../calls/call-context.js';
import { runCall } from '../calls/call-answer.js';
import { refusable, type RefusedCall } from '../calls/refusals.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf, checkAccess } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { parse } from '../http/validate.js';
import { CALL_ERROR_EXAMPLES, CALL_ERRORS } from '../openapi/error-examples.js';
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
  summary: 'List the actions of the catalog and of the remote MCP apps, optionally of one app',
  description:
    'Every action with its scope (`read`, `write` or `destructive`), which decides how the policy treats it: the catalog’s, then each remote MCP app’s tools that may be called now (`<app>.<tool>`).',
  request: { query: listQuery },
  response: z.object({ data: z.array(actionItem) }),
  errors: [],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/actions/{action}',
  operationId: 'get_action',
  summary: 'Get one action with the JSON Schema of its input',
  description: 'The `input_schema` tells an agent what `input` to send to run it.',
  request: { params: actionParam },
  response: actionItem.extend({
    app: z.string(),
    input_schema: z.record(z.string(), z.unknown()).meta({
      description: 'The JSON Schema of `input`',
      example: {
        type: 'object',
        properties: { title: { type: 'string', minLength: 1 } },
        required: ['title'],
        additionalProperties: false,
      },
    }),
  }),
  errors: [],
  errorExamples: [
    { when: 'unknown action', error: new NotFoundError('Action "acme.archive_task"') },
  ],
});

const runBody = z
  .strictObject({
    user: externalUserId.meta({ description: "The user's external id" }),
    input: z
      .record(z.string(), z.unknown())
      .default({})
      .meta({
        description: "The action's input; see `GET /v1/actions/{action}`",
        example: { title: 'Ship the report' },
      }),
  })
  .meta({ id: 'RunAction' });

registerConnectedUserOperation({
  method: 'post',
  path: '/v1/actions/{action}/run',
  operationId: 'run_action',
  summary: 'Run an action for a user',
  description:
    "The policy that governs your key's agent decides: an allowed call runs and answers the app's result; " +
    'a held one answers 403 `approval_required` without running (send the same call again once it is approved, see Approvals); ' +
    'a denied one answers 403 `denied_by_policy`. An app-level failure is not an error here: it answers 200 with `ok: false`, ' +
    "the app's body as `data` and its `upstream_status`. Identical calls in flight share one run; " +
    'send an `Idempotency-Key` with every write: a retry with it gets the first final answer again (kept 24 h) instead of writing twice, and two keys make two identical writes count as two.',
  request: {
    params: actionParam,
    headers: callHeaders,
    body: { content: { 'application/json': { schema: runBody } }, required: true },
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
  errors: CALL_ERRORS,
  requires: { operation: 'call' },
  errorExamples: [
    ...CALL_ERROR_EXAMPLES,
    { when: 'unknown action', error: new NotFoundError('Action "acme.archive_task"') },
  ],
});

/**
 * A refused run as far as its request tells: the action (as found, when the refusal came after
 * it was) and user as asked, and the input.
 */
function refusedRun(req: Request, action: DirectoryAction | null): RefusedCall {
  const asked = typeof req.params.action === 'string' ? req.params.action : '';
  const body: unknown = req.body;
  const fields =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const user = runBody.shape.user.safeParse(fields.user);
  return {
    action: action ? action.id : asked,
    scope: action?.scope ?? null,
    userExternalId: user.success ? user.data : null,
    request: { user: fields.user ?? null, input: fields.input ?? null },
  };
}

function summary(action: DirectoryAction) {
  return { action: action.id, scope: action.scope, description: action.description };
}

/** `GET /v1/actions`, and each action's input schema (the same zod that validates runs). */
export function actionRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);
  router.get('/v1/actions', authorize({ operation: 'read' }), async (req, res) => {
    const query = parse(listQuery, req.query, 'query');
    const actions = await listEnvironmentActions(deps.sql, callerOf(res).environmentId, query.app);
    res.json({ data: actions.map(summary) });
  });
  router.get('/v1/actions/:action', authorize({ operation: 'read' }), async (req, res) => {
    const { action: name } = parse(actionParam, req.params, 'path');
    const action = await findEnvironmentAction(deps.sql, callerOf(res).environmentId, name);
    if (!action) throw new NotFoundError(`Action "${name}"`);
    res.json({ ...summary(action), app: action.app, input_schema: directoryInputSchema(action) });
  });
  router.post('/v1/actions/:action/run', async (req, res) => {
    // Every refusal up to the call's start is audited, the key's access included.
    let found: DirectoryAction | null = null;
    const call = await refusable(
      deps,
      req,
      res,
      () => refusedRun(req, found),
      async () => {
        const caller = callerOf(res);
        // Found first, so that even a refusal of the key's access is audited with its scope.
        const named = actionParam.safeParse(req.params);
        found = named.success
          ? await findEnvironmentAction(deps.sql, caller.environmentId, named.data.action)
          : null;
        checkAccess(caller, { operation: 'call' });
        const { action: name } = parse(actionParam, req.params, 'path');
        if (!found) throw new NotFoundError(`Action "${name}"`);
        const body = parse(runBody, req.body, 'body');
        const target = await directoryCall(found, body.input);
        return callRequestOf(req, res, body.user, target, deps.config.approvals);
      },
    );
    await runCall(res, calls, call, deps);
  });
  return router;
}
