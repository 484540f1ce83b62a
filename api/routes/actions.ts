import { Router } from 'express';
import { z } from 'zod';
import { findAction, listActions, type ActionDefinition } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../app.js';
import { NotFoundError } from '../errors.js';
import { authorize } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';

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

function summary(action: ActionDefinition) {
  return {
    action: `${action.app}.${action.name}`,
    scope: action.scope,
    description: action.description,
  };
}

/** SPEC.md §4.1 `GET /v1/actions`, and each action's input schema (the same zod that validates runs). */
export function actionRoutes(_deps: ApiDeps): Router {
  const router = Router();
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
      input_schema: z.toJSONSchema(action.input, { target: 'draft-2020-12', io: 'input' }),
    });
  });
  return router;
}
