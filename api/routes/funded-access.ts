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

export const setFundedAccessBody = z.strictObject({ enabled: z.boolean() });

function present(value: FundedAccess): object {
  return {
    enabled: value.enabled,
    updated_at: value.updatedAt?.toISOString() ?? null,
    updated_by: value.updatedBy,
  };
}

/** SPEC.md §4.2 get_funded_access / set_funded_access. */
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
