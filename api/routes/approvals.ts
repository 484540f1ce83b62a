import { applyWaitPreference, honouredWaitSeconds, preferHeader } from '../http/prefer.js';
import { Router, type Response } from 'express';
import { z } from 'zod';
import { policiesInForce, withPolicyInForce } from '../../activities/approvals/policy-in-force.js';
import { listApprovals } from '../../activities/db/approvals.js';
import type { ApiDeps } from '../deps.js';
import { noticesOf } from '../../activities/db/approval-notifications.js';
import { approvalNotice, approvalNoticeSchema } from '../approvals/approval-notices.js';
import { decideApproval, loadApproval, presentApproval } from '../approvals/decide.js';
import { NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf, checkAccess } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { decodeCursor, page, pageQuery } from '../http/id-cursor.js';
import { parse } from '../http/validate.js';
import { DECISION_ERROR_EXAMPLES, EXAMPLE_APPROVAL } from '../openapi/error-examples.js';
import {
  registerConnectedUserOperation,
  registerManagementOperation,
  type ErrorExample,
} from '../openapi/registry.js';
import { callWorkflowsFor } from '../temporal/call-workflows.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import { grantRequestSchema, grantSchema } from './grants.js';
import { decisionSchema } from '../approvals/decision-schema.js';

const approvalParam = z.strictObject({ id: uuidString() });
const managementParam = z.strictObject({ approvalId: uuidString() });
export const decideBody = z
  .strictObject({
    decision: z.enum(['approve', 'deny']),
    // Optional, so a decision without a grant takes the body it always took.
    grant: grantRequestSchema.optional(),
  })
  .meta({ id: 'decide_approval_input' });
/**
 * `POST /v1/approvals/{id}/approve`: no body, or a grant. A rejection is read with
 * it too, only so that a grant sent with one is refused by name rather than ignored.
 */
const approveBody = z
  .strictObject({ grant: grantRequestSchema.optional() })
  .meta({ id: 'ApproveApproval' });

const statuses = ['pending', 'approved', 'rejected', 'expired', 'cancelled'] as const;
const scopes = z.enum(['read', 'write', 'destructive']);

const shownBody = z
  .object({
    bytes: z.int().meta({ description: 'Size of the whole body' }),
    sha256: z.string().meta({ description: 'Hex SHA-256 of the whole body' }),
    encoding: z.enum(['utf8', 'base64']).meta({
      description: '`utf8` when the shown part is text; otherwise `content` is base64',
    }),
    content: z.string().meta({ description: 'The first 64 KiB of the body' }),
    truncated: z.boolean(),
  })
  .meta({ id: 'ApprovalRequestBody' });

const requestSchema = z
  .object({
    action: z.string(),
    user: z.string(),
    via: z.enum(['api', 'mcp']),
    input: z.unknown().optional().meta({ description: 'Actions: the input that will run' }),
    method: z.string().optional().meta({ description: 'Proxy: the HTTP method that will be sent' }),
    path: z.string().optional().meta({ description: "Proxy: the path below the app's API base" }),
    query: z.string().nullable().optional().meta({ description: 'Proxy: the raw query string' }),
    headers: z
      .record(
        z.string(),
        z.union([z.string(), z.object({ encoding: z.literal('base64'), content: z.string() })]),
      )
      .optional()
      .meta({ description: 'Proxy: the headers that will be forwarded to the app' }),
    body: shownBody
      .nullable()
      .optional()
      .meta({ description: 'Proxy: the body that will be sent' }),
  })
  .meta({
    id: 'ApprovalRequest',
    description:
      'Exactly what runs once approved: the action and its input, or the proxy request as it will be sent. A retry that differs in any of it is another call.',
    example: EXAMPLE_APPROVAL.request,
  });

const approvalSchema = z.object({
  id: z.string(),
  status: z.enum(statuses).meta({
    description:
      '`pending`, `approved`, `rejected`; also `expired` (no decision in time) and `cancelled` (the user was deleted)',
  }),
  requested_from: z
    .array(z.string())
    .meta({ description: 'Who may decide; empty means anyone allowed to decide but the agent' }),
  action: z.string().meta({ description: '`<app>.<action>`, or `<app>.proxy`' }),
  scope: scopes,
  agent_id: z.string().meta({ description: 'The agent whose call is held (it can never decide)' }),
  user: z.string().meta({ description: "The user's external id" }),
  request: requestSchema,
  policy: z
    .object({
      id: z.string(),
      version: z.int(),
      rule: z.string().meta({ description: 'The part of the policy that asked for approval' }),
    })
    .meta({ description: 'The policy version that held the call' }),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  decided_by: z.string().nullable().meta({
    description:
      'Who settled it: the decision that reached the quorum, or the rejection; null while pending',
  }),
  decided_at: z.iso.datetime().nullable(),
  quorum: z.int().meta({
    description:
      'How many different deciders must approve before the call runs; one rejection rejects',
  }),
  approvals_needed: z.int().meta({
    description: 'Approvals still needed from other deciders; 0 once settled',
  }),
  decisions: z.array(decisionSchema).meta({ description: 'Every decision so far, oldest first' }),
  notifications: z.array(approvalNoticeSchema).optional().meta({
    description:
      'What was sent to whom about this approval (e-mail, Slack, Teams), oldest first, and how each went. Shown by the GET of one approval.',
  }),
  policy_in_force: z
    .object({
      id: z.string().nullable(),
      version: z.int().nullable(),
      decision: z.enum(['allow', 'ask', 'deny']),
      rule: z.string(),
    })
    .meta({
      description:
        'What the policy in force now decides on this call. Once approved, the call runs only if this is not `deny`: a newer policy version that denies it wins over the approval.',
    }),
});
const grantMade = grantSchema
  .optional()
  .meta({ description: 'Present when this decision made a grant: the grant' });
const decidedSchema = z.object({
  id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']).meta({
    description:
      '`pending` when this approval was recorded and more are needed (`approvals_needed`)',
  }),
  decided_by: z.string().nullable().meta({ description: 'Who settled it; null while pending' }),
  approvals_needed: z.int().optional().meta({
    description: 'Present while pending: the approvals still needed from other deciders',
  }),
  grant: grantMade,
});

const filters = {
  status: z.enum(statuses).optional(),
  requested_from: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'Approvals that ask this decider' }),
  agent: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: 'The agent whose call is held' }),
  user: externalUserId.optional().meta({ description: "A user's external id" }),
  action: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: '`<app>.<action>` or `<app>.proxy`' }),
};
export const listApprovalsQuery = z
  .strictObject({ ...filters, ...pageQuery('cursor') })
  .meta({ id: 'ListApprovalsQuery' });
const listApprovalsManagementQuery = z
  .strictObject({ ...filters, ...pageQuery('cursor') })
  .meta({ id: 'list_approvals_input' });

/**
 * This list once answered a `business` key with `nextCursor` only, where every other connected-user
 * list answers `cursor` to every key. Both now carry the same value; `nextCursor` goes after this
 * date (README, "Decide as a person").
 */
export const NEXT_CURSOR_SENT_UNTIL = '2027-05-31';
const nextCursorField = z
  .string()
  .nullable()
  .meta({
    description: `The same as \`cursor\`, still sent until ${NEXT_CURSOR_SENT_UNTIL} for clients written before \`cursor\` was; read \`cursor\`.`,
    deprecated: true,
  });

const decideNote =
  'The agent whose call is held can never decide it, and when `requested_from` names deciders only they may (403 `insufficient_access`). ' +
  'An approval whose `quorum` is more than 1 needs that many different deciders: each approval is recorded and the approval stays `pending` (`approvals_needed` counts down) until the last one; one rejection rejects. The same decider twice, or a person who owns one of the held agent’s API keys, is refused (403). ' +
  "An approval may carry `grant` (`{for: 'user' | 'any_user', seconds}`): the same action of the same agent then runs without asking for that user (or any user) until the grant ends; more than the policy's `approval.max_grant_seconds`, or any grant when that is 0, is 400. " +
  'Answers once the decision is recorded; an approval that is no longer pending answers 409. ' +
  'Once approved, the caller sends the same call again and it runs once. ' +
  'Deciding with `POST /v1/approvals/{id}/approve` or `/reject`, or with `POST /v1/approvals/{approvalId}/decision`, has the same effect under the same rules.';
const unknownApproval: ErrorExample = {
  when: 'unknown approval',
  error: new NotFoundError(`Approval ${EXAMPLE_APPROVAL.id}`),
};

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/approvals',
  operationId: 'list_approval_records',
  summary: 'List approvals, newest first: the approvers’ inbox',
  description:
    'Filter by `status`, `requested_from` (what waits for one decider), `agent`, `user` and `action`; pass `cursor` from one page to get the next. ' +
    'Each record shows exactly what will run once approved. Needs scope `approvals:read`. ' +
    `A \`business\` key gets the management shape \`{data, cursor, nextCursor}\`, \`nextCursor\` the same as \`cursor\` until ${NEXT_CURSOR_SENT_UNTIL}.`,
  request: { query: listApprovalsQuery },
  response: z.object({ data: z.array(approvalSchema), cursor: z.string().nullable() }),
  errors: [],
  requires: { operation: 'read', scope: 'approvals:read' },
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/approvals/{id}',
  operationId: 'get_approval_record',
  summary: 'Get an approval',
  description:
    'Its status, who may decide, and exactly what will run once approved. Send `Prefer: wait=<seconds>` to get the answer once a pending approval is decided (or when the wait ends), or listen for the `approval.decided` webhook, to know when to send the held call again (or send the call itself with `Prefer: wait`). ' +
    'A `business` key gets the management shape `{data}` and needs scope `approvals:read`.',
  request: {
    params: approvalParam,
    headers: z.object({
      Prefer: preferHeader.meta({
        description:
          '`wait=<seconds>`: answer once the approval is decided, or when the wait ends (at most PREFER_WAIT_MAX_SECONDS, default 60).',
        example: 'wait=30',
      }),
    }),
  },
  response: approvalSchema.meta({ id: 'Approval' }),
  errors: [],
  requires: { operation: 'read', scope: 'approvals:read' },
  errorExamples: [unknownApproval],
});
for (const [verb, status] of [
  ['approve', 'approved'],
  ['reject', 'rejected'],
] as const) {
  registerConnectedUserOperation({
    method: 'post',
    path: `/v1/approvals/{id}/${verb}`,
    operationId: `${verb}_approval`,
    summary: `${verb === 'approve' ? 'Approve' : 'Reject'} a pending approval`,
    description: `The approval becomes \`${status}\`. Needs scope \`approvals:decide\`. ${decideNote}`,
    request:
      verb === 'approve'
        ? {
            params: approvalParam,
            body: { content: { 'application/json': { schema: approveBody } }, required: false },
          }
        : { params: approvalParam },
    response: decidedSchema,
    errors: [],
    requires: { operation: 'write', scope: 'approvals:decide' },
    errorExamples: DECISION_ERROR_EXAMPLES,
  });
}
registerManagementOperation({
  method: 'get',
  path: '/v1/approvals',
  operationId: 'list_approvals',
  summary: 'List approvals, newest first: the approvers’ inbox',
  description:
    'Filter by `status`, `requested_from` (what waits for one decider), `agent`, `user` and `action`; pass `cursor` from one page to get the next, as on every connected-user list. ' +
    `\`nextCursor\` is the same value, sent until ${NEXT_CURSOR_SENT_UNTIL}.`,
  scope: 'approvals:read',
  request: { query: listApprovalsManagementQuery },
  output: z.array(approvalSchema).meta({ id: 'list_approvals_output' }),
  envelope: {
    cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last' }),
    nextCursor: nextCursorField,
  },
});
registerManagementOperation({
  method: 'get',
  path: '/v1/approvals/{approvalId}',
  operationId: 'get_approval',
  summary: 'Get an approval',
  description: 'Its status, who may decide, and exactly what will run once approved.',
  scope: 'approvals:read',
  request: { params: managementParam },
  output: approvalSchema.meta({ id: 'get_approval_output' }),
  errorExamples: [unknownApproval],
});
registerManagementOperation({
  method: 'post',
  path: '/v1/approvals/{approvalId}/decision',
  operationId: 'decide_approval',
  summary: 'Approve or deny a pending approval',
  description: `\`{"decision": "approve"}\` makes it \`approved\`, \`{"decision": "deny"}\` \`rejected\`. ${decideNote}`,
  scope: 'approvals:decide',
  errorExamples: DECISION_ERROR_EXAMPLES,
  request: {
    params: managementParam,
    body: { content: { 'application/json': { schema: decideBody } }, required: true },
  },
  output: approvalSchema.extend({ grant: grantMade }).meta({ id: 'decide_approval_output' }),
});

/**
 * The connected-user approval routes and the management get_approval / decide_approval: one set of
 * approvals, decided through the workflow Update of the call that waits on them, by deciders the
 * four-eyes rules allow.
 */
export function approvalRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);

  const decide = (
    res: Response,
    approvalId: string,
    decision: 'approve' | 'reject',
    grant: GrantRequest | undefined,
  ) => {
    const caller = callerOf(res);
    return decideApproval(deps.sql, calls, {
      environmentId: caller.environmentId,
      approvalId,
      decision,
      decider: { kind: 'key', agentId: caller.agentId },
      ...(grant ? { grant } : {}),
    });
  };

  // The paths both interfaces define answer each audience in its own shape.
  router.get(
    '/v1/approvals',
    authorize({ operation: 'read', scope: 'approvals:read' }),
    async (req, res) => {
      const caller = callerOf(res);
      const business = caller.audience === 'business';
      const query = parse(
        business ? listApprovalsManagementQuery : listApprovalsQuery,
        req.query,
        'query',
      );
      const rows = await listApprovals(
        deps.sql,
        caller.environmentId,
        {
          ...(query.status ? { status: query.status } : {}),
          ...(query.requested_from ? { requestedFrom: query.requested_from } : {}),
          ...(query.agent ? { agentId: query.agent } : {}),
          ...(query.user ? { userExternalId: query.user } : {}),
          ...(query.action ? { action: query.action } : {}),
          ...(query.cursor ? { before: decodeCursor(query.cursor) } : {}),
        },
        query.limit + 1,
      );
      const { items, cursor } = page(rows, query.limit);
      const inForce = await policiesInForce(deps.sql, caller.environmentId, items);
      const data = items.map((approval) => ({
        ...presentApproval(approval),
        policy_in_force: inForce(approval),
      }));
      res.json(business ? { data, cursor, nextCursor: cursor } : { data, cursor });
    },
  );

  router.get('/v1/approvals/:id', authorize({ operation: 'read' }), async (req, res) => {
    const caller = callerOf(res);
    const business = caller.audience === 'business';
    if (business) checkAccess(caller, { operation: 'read', scope: 'approvals:read' });
    const { id } = business
      ? { id: parse(managementParam, { approvalId: req.params.id }, 'path').approvalId }
      : parse(approvalParam, req.params, 'path');
    let approval = await loadApproval(deps.sql, caller.environmentId, id);
    // `Prefer: wait=<s>` answers once a pending approval is decided, or at the end.
    const waitSeconds = honouredWaitSeconds(req, deps.config.requests.maxWaitSeconds);
    applyWaitPreference(res, waitSeconds);
    if (waitSeconds !== null && approval.status === 'pending') {
      const waitMs = Math.min(waitSeconds * 1000, approval.expiresAt.getTime() - Date.now());
      if (waitMs > 0) {
        await calls.awaitDecision(approval.workflowId, approval.id, waitMs);
        approval = await loadApproval(deps.sql, caller.environmentId, id);
      }
    }
    const [view, notices] = await Promise.all([
      withPolicyInForce(deps.sql, approval, presentApproval(approval)),
      noticesOf(deps.sql, approval.id),
    ]);
    const shown = { ...view, notifications: notices.map(approvalNotice) };
    res.json(business ? { data: shown } : shown);
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
        // No body was the whole contract before grants, and still is for a rejection: a grant
        // sent with one goes on to the one check of it (decide.ts), which refuses it with 400
        // before anything is decided, as the management decision with `deny` does.
        const { grant } = parse(approveBody, req.body ?? {}, 'body');
        const decided = await decide(res, id, decision, grant);
        res.json({
          id: decided.id,
          status: decided.status,
          decided_by: decided.decided_by,
          // Only while more approvals are needed, so a settled answer keeps the shape it had.
          ...(decided.status === 'pending' ? { approvals_needed: decided.approvals_needed } : {}),
          ...(decided.grant ? { grant: decided.grant } : {}),
        });
      },
    );
  }

  router.post(
    '/v1/approvals/:approvalId/decision',
    authorize({ operation: 'write', scope: 'approvals:decide' }),
    async (req, res) => {
      const { approvalId } = parse(managementParam, req.params, 'path');
      const { decision, grant } = parse(decideBody, req.body, 'body');
      const decided = await decide(
        res,
        approvalId,
        decision === 'approve' ? 'approve' : 'reject',
        grant,
      );
      const subject = {
        id: decided.id,
        agentId: decided.agent_id,
        action: decided.action,
        scope: decided.scope,
        userExternalId: decided.user,
        request: decided.request,
      };
      const inForce = await policiesInForce(deps.sql, callerOf(res).environmentId, [subject]);
      res.json({
        data: { ...decided, policy_in_force: inForce(subject) },
      });
    },
  );
  return router;
}
