import { Router } from 'express';
import { z } from 'zod';
import {
  getFundedAccess,
  setFundedAccess,
  type FundedAccess,
} from '../../activities/db/funded-access.js';
import type { Sql } from '../../infra/database/client.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';

export const setFundedAccessBody = z
  .strictObject({ enabled: z.boolean() })
  .meta({ id: 'set_funded_access_input' });

const fundedAccessOutput = z.object({
  enabled: z.boolean(),
  updated_at: z.iso.datetime().nullable(),
  updated_by: z
    .string()
    .nullable()
    .meta({ description: 'agent id of the key that last changed it' }),
});

registerManagementOperation({
  method: 'get',
  path: '/v1/funded-access',
  operationId: 'get_funded_access',
  summary: 'Get whether funded access is on',
  description:
    "With funded access on, the operator's own OAuth clients stand in for apps that have no auth config in the environment.",
  scope: 'funded_access:read',
  output: fundedAccessOutput.meta({ id: 'get_funded_access_output' }),
});

registerManagementOperation({
  method: 'put',
  path: '/v1/funded-access',
  operationId: 'set_funded_access',
  summary: 'Turn funded access on or off',
  scope: 'funded_access:manage',
  request: {
    body: { content: { 'application/json': { schema: setFundedAccessBody } }, required: true },
  },
  output: fundedAccessOutput.meta({ id: 'set_funded_access_output' }),
});

function present(value: FundedAccess): z.infer<typeof fundedAccessOutput> {
  return {
    enabled: value.enabled,
    updated_at: value.updatedAt?.toISOString() ?? null,
    updated_by: value.updatedBy,
  };
}

/** The management operations get_funded_access / set_funded_access. */
export function fundedAccessRoutes(deps: { sql: Sql }): Router {
  const router = Router();
  router.get(
    '/v1/funded-access',
    authorize({ operation: 'read', scope: 'funded_access:read' }),
    async (_req, res) => {
      const value = await getFundedAccess(deps.sql, callerOf(res).environmentId);
      res.json({ data: present(value) });
    },
  );
  router.put(
    '/v1/funded-access',
    authorize({ operation: 'write', scope: 'funded_access:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const body = parse(setFundedAccessBody, req.body, 'body');
      const value = await setFundedAccess(
        deps.sql,
        caller.environmentId,
        body.enabled,
        caller.agentId,
      );
      res.json({ data: present(value) });
    },
  );
  return router;
}
