import { Router, type Response } from 'express';
import { z } from 'zod';
import {
  changeGroupRoles,
  type RoleMappingActor,
} from '../../activities/audit/role-mapping-changes.js';
import {
  listRoleMappings,
  rolesOfGroups,
  type RoleMapping,
} from '../../activities/db/role-mappings.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';
import {
  mappingName,
  role,
  roleMappingPath,
  setRoleMappingBody,
} from '../people/role-mapping-inputs.js';

const roleMappingSchema = z
  .object({
    group: z
      .string()
      .meta({ description: "The group as the identity provider's `groups` claim names it" }),
    roles: z.array(role).meta({ description: 'In the order approver, operator, admin' }),
  })
  .meta({ id: 'RoleMapping' });

const ROLES_IN_WORDS =
  'People who sign in to the console get the roles their groups hold in the environment: `approver` decides held calls, `operator` governs policies, apps and connections, `admin` governs and maps groups to roles. A name `person:<email>` maps one person, whatever their groups (for providers whose ID tokens carry no groups). The owner of an agent’s key never decides that agent’s calls, whatever their roles.';

const unmapped = {
  when: 'the group holds no role',
  error: new NotFoundError('Role mapping of group "Finance Approvers"'),
};

registerManagementOperation({
  method: 'get',
  path: '/v1/role-mappings',
  operationId: 'list_role_mappings',
  summary: "List the identity provider's groups that hold roles",
  description: `Every mapped group of the key's environment with its roles, by group name. ${ROLES_IN_WORDS}`,
  scope: 'people:read',
  output: z.array(roleMappingSchema).meta({ id: 'list_role_mappings_output' }),
});
registerManagementOperation({
  method: 'put',
  path: '/v1/role-mappings/{group}',
  operationId: 'set_role_mapping',
  summary: "Replace a group's roles",
  description:
    'The group holds exactly the roles given from now on; an empty list removes it. People already signed in to the console hold the new roles from their next request on. Recorded in the audit log (`people.role_mappings`, `via: "operator"`).',
  scope: 'people:manage',
  request: {
    params: roleMappingPath,
    body: { content: { 'application/json': { schema: setRoleMappingBody } }, required: true },
  },
  output: roleMappingSchema.meta({ id: 'set_role_mapping_output' }),
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/role-mappings/{group}',
  operationId: 'delete_role_mapping',
  summary: 'Remove a group from the role mappings',
  description:
    'The group holds no role from now on, as `PUT` with no roles does, but a group that holds none is 404, so a mistyped name is noticed. Recorded in the audit log.',
  scope: 'people:manage',
  request: { params: roleMappingPath },
  errorExamples: [unmapped],
  output: z
    .object({ group: z.string(), deleted: z.literal(true) })
    .meta({ id: 'delete_role_mapping_output' }),
});

function present(mapping: RoleMapping): z.infer<typeof roleMappingSchema> {
  return { group: mapping.group, roles: mapping.roles };
}

/** The key that changes the mappings, recorded with the change. */
function actorOf(res: Response): RoleMappingActor {
  const caller = callerOf(res);
  return {
    environmentId: caller.environmentId,
    agentId: caller.agentId,
    channel: 'api',
    key: { id: caller.keyId, name: caller.keyName },
    traceId: res.locals.traceId,
  };
}

/**
 * Which of the identity provider's groups hold which role in the key's environment. Express
 * decodes the path, so a group named with spaces or slashes arrives whole (`%2F` stays in its
 * segment).
 */
export function roleMappingRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'people:read' });
  const manage = authorize({ operation: 'write', scope: 'people:manage' });

  router.get('/v1/role-mappings', read, async (_req, res) => {
    const mappings = await listRoleMappings(deps.sql, callerOf(res).environmentId);
    res.json({ data: mappings.map(present) });
  });

  router.put('/v1/role-mappings/:group', manage, async (req, res) => {
    const group = mappingName(parse(roleMappingPath, req.params, 'path').group);
    const { roles } = parse(setRoleMappingBody, req.body, 'body');
    const kept = await changeGroupRoles(deps.sql, actorOf(res), group, roles);
    req.log.info({ group, roles: kept }, 'role mapping set');
    res.json({ data: present({ group, roles: kept }) });
  });

  router.delete('/v1/role-mappings/:group', manage, async (req, res) => {
    const group = mappingName(parse(roleMappingPath, req.params, 'path').group);
    expectNoBody(req);
    const actor = actorOf(res);
    const held = await rolesOfGroups(deps.sql, actor.environmentId, [group]);
    if (held.length === 0) throw new NotFoundError(`Role mapping of group "${group}"`);
    await changeGroupRoles(deps.sql, actor, group, []);
    req.log.info({ group }, 'role mapping removed');
    res.json({ data: { group, deleted: true } });
  });

  return router;
}
