import { Router } from 'express';
import { z } from 'zod';
import type { Caller } from '../../activities/db/api-keys.js';
import {
  findConnectedUser,
  listConnectedUsers,
  type ConnectedUserSummary,
} from '../../activities/db/connected-users.js';
import { listUserConnections } from '../../activities/db/connections.js';
import type { Sql } from '../../infra/database/client.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { decodeCursor, page, pageQuery } from '../http/id-cursor.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation, type ErrorExample } from '../openapi/registry.js';
import { connectionListItemSchema, presentConnectionListItem } from '../presenters/connections.js';
import {
  presentUser,
  presentUserListItem,
  userListItemSchema,
  userSchema,
} from '../presenters/users.js';
import { connectionWorkflowsFor } from '../temporal/connection-workflows.js';

export const listUsersQuery = z
  .strictObject({
    customer: z.string().min(1).max(256).optional(),
    status: z.enum(['active', 'needs_reconnect', 'disconnected']).optional().meta({
      description:
        '`active`: has an active connection; `needs_reconnect`: has an expired one; `disconnected`: neither',
    }),
    ...pageQuery('cursor'),
  })
  .meta({ id: 'ListUsersQuery' });

const userPath = z.strictObject({
  user: externalUserId.meta({ description: 'Your own id for the user (`external_id`)' }),
});

const unknownUser: ErrorExample = {
  when: 'unknown user',
  error: new NotFoundError('User "u_123"'),
};

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/users',
  operationId: 'list_users',
  summary: 'List connected users, newest first',
  description: 'Pass `cursor` from one page to get the next; it is null on the last page.',
  request: { query: listUsersQuery },
  response: z.object({ data: z.array(userListItemSchema), cursor: z.string().nullable() }),
  errors: [],
});

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/users/{user}',
  operationId: 'get_user',
  summary: 'Get a connected user by your own id for them',
  request: { params: userPath },
  response: userSchema,
  errors: [],
  errorExamples: [unknownUser],
});

registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/users/{user}',
  operationId: 'delete_user',
  summary: 'Delete a user and their tokens',
  description:
    'Revokes their connections (at the apps too, where they offer revocation), deletes them and their tokens, and cancels their pending approvals. Irreversible; their audit history stays.',
  request: { params: userPath },
  response: z.object({ ok: z.boolean() }),
  errors: [],
  requires: { operation: 'write' },
  errorExamples: [unknownUser],
});

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/users/{user}/connections',
  operationId: 'list_user_connections',
  summary: "List a user's connections",
  description: 'Active and expired ones; revoked connections are left out.',
  request: { params: userPath },
  response: z.object({ data: z.array(connectionListItemSchema) }),
  errors: [],
  errorExamples: [unknownUser],
});

async function userOf(sql: Sql, caller: Caller, externalId: string): Promise<ConnectedUserSummary> {
  const user = await findConnectedUser(sql, caller.environmentId, externalId);
  if (!user) throw new NotFoundError(`User "${externalId}"`);
  return user;
}

/** The connected users of the caller's environment and their connections. */
export function usersRoutes(deps: ApiDeps): Router {
  const router = Router();
  const workflows = connectionWorkflowsFor(deps);

  router.get('/v1/users', authorize({ operation: 'read' }), async (req, res) => {
    const caller = callerOf(res);
    const query = parse(listUsersQuery, req.query, 'query');
    const users = await listConnectedUsers(deps.sql, caller.environmentId, {
      ...(query.customer === undefined ? {} : { customer: query.customer }),
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.cursor === undefined ? {} : { after: decodeCursor(query.cursor) }),
      // One more than a page tells whether another page follows.
      limit: query.limit + 1,
    });
    const { items, cursor } = page(users, query.limit);
    res.json({ data: items.map(presentUserListItem), cursor });
  });

  router.get('/v1/users/:user', authorize({ operation: 'read' }), async (req, res) => {
    const caller = callerOf(res);
    const { user } = parse(userPath, req.params, 'path');
    res.json(presentUser(await userOf(deps.sql, caller, user), caller.environmentName));
  });

  router.delete('/v1/users/:user', authorize({ operation: 'write' }), async (req, res) => {
    const caller = callerOf(res);
    const { user: externalId } = parse(userPath, req.params, 'path');
    const user = await userOf(deps.sql, caller, externalId);
    const connections = await listUserConnections(deps.sql, user.id);
    await workflows.deleteUser(
      user.id,
      connections.map((connection) => connection.id),
    );
    res.json({ ok: true });
  });

  router.get('/v1/users/:user/connections', authorize({ operation: 'read' }), async (req, res) => {
    const caller = callerOf(res);
    const { user: externalId } = parse(userPath, req.params, 'path');
    const user = await userOf(deps.sql, caller, externalId);
    const connections = await listUserConnections(deps.sql, user.id);
    res.json({ data: connections.map(presentConnectionListItem) });
  });

  return router;
}
