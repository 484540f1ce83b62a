import { Router, type Response } from 'express';
import { z } from 'zod';
import { approvalView, findApproval, type Approval } from '../../activities/db/approvals.js';
import type { ApprovalView } from '../../workflows/call-types.js';
import type { ApiDeps } from '../app.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf, checkAccess } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import {
  registerConnectedUserOperation,
  registerManagementOperation,
} from '../openapi/registry.js';
import { CallWorkflows } from '../temporal/call-workflows.js';

const approvalParam = z.strictObject({ id: uuidString() });
const managementParam = z.strictObject({ approvalId: uuidString() });
export const decideBody = z
  .strictObject({ decision: z.enum(['approve', 'deny']) })
  .meta({ id: 'decide_approval_input' });

const approvalSchema = z.object({
  id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected', 'expired', 'cancelled']),
  requested_from: z.array(z.string()),
  action: z.string(),
  scope: z.enum(['read', 'write', 'destructive']),
  agent_id: z.string(),
  user: z.string().meta({ description: "The user's external id" }),
  request: z.record(z.string(), z.unknown()).meta({ description: 'What the held call asks' }),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  decided_by: z.string().nullable(),
  decided_at: z.iso.datetime().nullable(),
});
const decidedSchema = z.object({
  id: z.string(),
  status: z.enum(['approved', 'rejected']),
  decided_by: z.string(),
});

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/approvals/{id}',
  operationId: 'get_approval_record',
  summary: 'An approval (a `business` key gets the management shape `{data}`)',
  request: { params: approvalParam },
  response: approvalSchema.meta({ id: 'Approval' }),
  errors: [400, 401, 403, 404],
});
for (const [verb, status] of [
  ['approve', 'approved'],
  ['reject', 'rejected'],
] as const) {
  registerConnectedUserOperation({
    method: 'post',
    path: `/v1/approvals/{id}/${verb}`,
    operationId: `${verb}_approval`,
    summary: `${verb === 'approve' ? 'Approve' : 'Reject'} a pending approval (→ ${status}); needs scope approvals:decide`,
    request: { params: approvalParam },
    response: decidedSchema,
    errors: [400, 401, 403, 404, 409],
  });
}
registerManagementOperation({
  method: 'get',
  path: '/v1/approvals/{approvalId}',
  operationId: 'get_approval',
  summary: 'An approval and its state',
  scope: 'approvals:read',
  request: { params: managementParam },
  output: approvalSchema.meta({ id: 'get_approval_output' }),
});
registerManagementOperation({
  method: 'post',
  path: '/v1/approvals/{approvalId}/decision',
  operationId: 'decide_approval',
  summary: 'Approve or deny a pending approval',
  scope: 'approvals:decide',
  request: {
    params: managementParam,
    body: { content: { 'application/json': { schema: decideBody } }, required: true },
  },
  output: approvalSchema.meta({ id: 'decide_approval_output' }),
});

/** A pending approval past its expiry reads as expired, even before its workflow says so. */
function present(approval: Approval, now = new Date()): ApprovalView {
  const view = approvalView(approval);
  return view.status === 'pending' && approval.expiresAt <= now
    ? { ...view, status: 'expired' }
    : view;
}

/**
 * SPEC.md §4.1 approvals and §4.2 get_approval / decide_approval: one set of approvals, decided
 * through the workflow Update of the call that waits on them (DESIGN.md §4).
 */
export function approvalRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = new CallWorkflows(deps.temporal, deps.sql, deps.config.temporal.taskQueue);

  async function load(res: Response, id: string): Promise<Approval> {
    const approval = await findApproval(deps.sql, callerOf(res).environmentId, id);
    if (!approval) throw new NotFoundError(`Approval ${id}`);
    return approval;
  }

  async function decide(
    res: Response,
    id: string,
    decision: 'approve' | 'reject',
  ): Promise<ApprovalView> {
    const approval = await load(res, id);
    const current = present(approval);
    if (current.status !== 'pending') {
      throw new ConflictError(
        `Approval ${id} is ${current.status}; only a pending one can be decided.`,
        {
          approval: { id, status: current.status },
        },
      );
    }
    return calls.decide(approval, { decision, decidedBy: callerOf(res).agentId });
  }

  // DESIGN.md §3: the one path both interfaces define answers each audience in its own shape.
  router.get('/v1/approvals/:id', authorize({ operation: 'read' }), async (req, res) => {
    const caller = callerOf(res);
    const business = caller.audience === 'business';
    if (business) checkAccess(caller, { operation: 'read', scope: 'approvals:read' });
    const { id } = business
      ? { id: parse(managementParam, { approvalId: req.params.id }, 'path').approvalId }
      : parse(approvalParam, req.params, 'path');
    const view = present(await load(res, id));
    res.json(business ? { data: view } : view);
  });

  for (const [verb, decision] of [
    ['approve', 'approve'],
    ['reject', 'reject'],
  ] as const) {
    router.post(
      `/v1/approvals/:id/${verb}`,
      authorize({ operation: 'write', scope: 'approvals:decide' }),
      async (req, res) => {
        const { id } = parse(approvalParam, req.params, 'path');
        const decided = await decide(res, id, decision);
        res.json({ id: decided.id, status: decided.status, decided_by: decided.decided_by });
      },
    );
  }

  router.post(
    '/v1/approvals/:approvalId/decision',
    authorize({ operation: 'write', scope: 'approvals:decide' }),
    async (req, res) => {
      const { approvalId } = parse(managementParam, req.params, 'path');
      const { decision } = parse(decideBody, req.body, 'body');
      const decided = await decide(res, approvalId, decision === 'approve' ? 'approve' : 'reject');
      res.json({ data: decided });
    },
  );
  return router;
}
