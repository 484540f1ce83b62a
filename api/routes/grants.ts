import { Router } from 'express';
import { z } from 'zod';
import { grantView, listGrants, revokeGrant } from '../../activities/db/grants.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { decodeCursor, page, pageQuery } from '../http/id-cursor.js';
import { uuidString } from '../http/ids.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';

const MAX_GRANT_SECONDS = 30 * 24 * 3600;
const grantFor = z.enum(['user', 'any_user']);

/** The grant an approval may carry, on every decision path. */
export const grantRequestSchema = z
  .strictObject({
    for: grantFor.meta({
      description: '`user`: for the held call’s user only; `any_user`: for every user',
    }),
    seconds: z
      .int()
      .min(1)
      .max(MAX_GRANT_SECONDS)
      .meta({ description: "How long; at most the policy's `approval.max_grant_seconds`" }),
  })
  .meta({
    id: 'GrantRequest',
    description:
      'Also allow the same action (at the same scope) of the same agent without asking, until the grant ends. Only with an approval, and only when the policy allows grants.',
    example: { for: 'user', seconds: 3600 },
  });

export const grantSchema = z
  .object({
    id: z.string(),
    agent_id: z.string().meta({ description: 'The agent whose calls it lets through' }),
    action: z.string().meta({ description: '`<app>.<action>`, or `<app>.proxy`' }),
    scope: z.enum(['read', 'write', 'destructive']),
    for: grantFor,
    user: z.string().nullable().meta({ description: "The user's external id; null: any user" }),
    approval_id: z.string().meta({ description: 'The approval that made it' }),
    created_by: z.string().meta({ description: 'The person who approved and granted' }),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime().meta({ description: 'It applies to calls strictly before this' }),
    status: z.enum(['active', 'expired', 'revoked']),
    revoked_at: z.iso.datetime().nullable(),
    revoked_by: z.string().nullable(),
  })
  .meta({ id: 'Grant' });

export const listGrantsQuery = z
  .strictObject({
    agent: z.string().min(1).max(200).optional().meta({ description: 'The agent granted' }),
    action: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: '`<app>.<action>` or `<app>.proxy`' }),
    user: externalUserId
      .optional()
      .meta({ description: "Grants that apply to this user's calls: theirs and any user's" }),
    status: z.enum(['active', 'expired', 'revoked']).optional(),
    ...pageQuery('cursor'),
  })
  .meta({ id: 'ListGrantsQuery' });
const grantParam = z.strictObject({ id: uuidString() });

const ownGrants =
  'A key never sees or revokes the grants of its own agent (the governed agent can neither see nor extend what was granted to it): they are left out of lists and answer 404.';

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/grants',
  operationId: 'list_grants',
  summary: 'List grants, newest first',
  description:
    'Filter by `agent`, `action`, `user` and `status` (`active`, `expired`, `revoked`); pass `cursor` from one page to get the next. ' +
    `Needs scope \`grants:read\`. ${ownGrants}`,
  request: { query: listGrantsQuery },
  response: z.object({ data: z.array(grantSchema), cursor: z.string().nullable() }),
  errors: [],
  requires: { operation: 'read', scope: 'grants:read' },
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/grants/{id}',
  operationId: 'revoke_grant',
  summary: 'Revoke a grant',
  description:
    'The next call it would have let through is judged by the policy alone. Revoking a revoked grant answers it as it is. ' +
    `Needs scope \`grants:manage\`. ${ownGrants}`,
  request: { params: grantParam },
  response: grantSchema,
  errors: [],
  requires: { operation: 'write', scope: 'grants:manage' },
  errorExamples: [
    { when: 'unknown grant, or the key’s own agent’s', error: new NotFoundError('Grant') },
  ],
});

/** `GET /v1/grants` and `DELETE /v1/grants/{id}`. */
export function grantRoutes(deps: ApiDeps): Router {
  const router = Router();

  router.get(
    '/v1/grants',
    authorize({ operation: 'read', scope: 'grants:read' }),
    async (req, res) => {
      const caller = callerOf(res);
      const query = parse(listGrantsQuery, req.query, 'query');
      const rows = await listGrants(
        deps.sql,
        caller.environmentId,
        {
          hiddenAgentId: caller.agentId,
          ...(query.agent ? { agentId: query.agent } : {}),
          ...(query.action ? { action: query.action } : {}),
          ...(query.user ? { userExternalId: query.user } : {}),
          ...(query.status ? { status: query.status } : {}),
          ...(query.cursor ? { before: decodeCursor(query.cursor) } : {}),
        },
        query.limit + 1,
      );
      const { items, cursor } = page(rows, query.limit);
      const now = new Date();
      res.json({ data: items.map((grant) => grantView(grant, now)), cursor });
    },
  );

  router.delete(
    '/v1/grants/:id',
    authorize({ operation: 'write', scope: 'grants:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const { id } = parse(grantParam, req.params, 'path');
      const grant = await revokeGrant(deps.sql, caller.environmentId, id, caller.agentId);
      if (!grant) throw new NotFoundError(`Grant ${id}`);
      req.log.info({ grantId: id, revokedBy: grant.revokedBy }, 'grant revoked');
      res.json(grantView(grant));
    },
  );
  return router;
}
