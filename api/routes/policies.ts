import { Router } from 'express';
import { z } from 'zod';
import {
  findPolicy,
  findPolicyVersion,
  listPolicies,
  replacePolicy,
  type StoredPolicy,
} from '../../activities/db/policies.js';
import { checkCondition, MAX_CONDITION_LENGTH } from '../../activities/policy/conditions.js';
import type { Sql } from '../../infra/database/client.js';
import type { ApiDeps } from '../deps.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import {
  approvalSettingsIssues,
  noticeSettingsSchema,
  checkApprovalSettings,
  quorumSchema,
  requestedFromSchema,
  ruleApprovalSchema,
  ttlSecondsSchema,
} from '../policies/approval-settings.js';
import type { ApprovalSettings } from '../../workflows/policy.js';

const decision = z.enum(['allow', 'ask', 'deny']);
const scope = z.enum(['read', 'write', 'destructive']);
const name = z.string().min(1).max(100);
const agentId = z.string().min(1).max(200);

const rule = z
  .strictObject({
    action: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9_-]*\.(\*|[a-z0-9_*]+)$/,
        'must be <app>.<action>, or a glob such as github.*',
      )
      .optional(),
    app: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/)
      .max(100)
      .optional(),
    scope: scope.optional(),
    when: z.string().min(1).max(MAX_CONDITION_LENGTH).optional().meta({
      description:
        'A CEL condition over the call: the rule applies only where it holds. Variables: `input`, `request` (proxy: `method`, `path`, `raw_path`, `query`, `headers`), `user`, `agent`, `app`, `action`, `scope`, `via`, `now`.',
      example: 'input.amount > 100',
    }),
    decision,
    approval: ruleApprovalSchema.optional(),
  })
  .refine((r) => r.action !== undefined || r.app !== undefined || r.scope !== undefined, {
    message: 'a rule must match on action, app or scope',
  })
  .refine((r) => r.approval === undefined || r.decision === 'ask', {
    message: 'only a rule whose decision is ask has approval settings',
    path: ['approval'],
  })
  .superRefine((r, ctx) => {
    // An over-long text is refused by its own bound above; it is not parsed.
    if (r.when === undefined || r.when.length > MAX_CONDITION_LENGTH) return;
    const checked = checkCondition(r.when);
    if (checked.ok) return;
    ctx.addIssue({
      code: 'custom',
      path: ['when'],
      message: `line ${String(checked.line)}, column ${String(checked.column)}: ${checked.message}`,
    });
  });

export const policyIdParam = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'policy ids are slugs: a-z, 0-9 and -'),
});

export const replacePolicyBody = z
  .strictObject({
    name: name.optional(),
    agents: z
      .array(agentId)
      .max(100)
      .optional()
      .meta({ description: 'Agents governed; `*` stands for all.' }),
    defaults: z.strictObject({ read: decision, write: decision, destructive: decision }),
    rules: z.array(rule).max(500).default([]),
    approval: z
      .strictObject({
        requested_from: requestedFromSchema.default([]),
        ttl_seconds: ttlSecondsSchema,
        quorum: quorumSchema.default(1),
        max_grant_seconds: z
          .int()
          .min(0)
          .max(30 * 24 * 3600)
          .default(0)
          .meta({
            description:
              'How long a grant made with an approval may last; 0 (the default) turns grants off, and stops the grants already made from applying.',
          }),
        ...noticeSettingsSchema,
      })
      .optional()
      .meta({
        description:
          'Who decides held calls, how many different deciders must approve (default 1), how long an approval waits (default 24 h), the longest grant an approver may add (default 0: none), and when those asked are reminded and to whom it escalates (default: never). A rule that asks may carry its own `approval` settings.',
      }),
  })
  .superRefine((body, ctx) => {
    // Checked here when the body carries the approval settings; otherwise, once merged with the
    // policy's current ones (policyApproval).
    if (body.approval === undefined) return;
    for (const issue of approvalSettingsIssues(body.approval, body.rules)) {
      ctx.addIssue({ code: 'custom', path: issue.path.split('.'), message: issue.message });
    }
  })
  .meta({ id: 'ReplacePolicy' });

/** What a new policy asks when its body names no approval settings. */
const DEFAULT_APPROVAL: ApprovalSettings = { requested_from: [], ttl_seconds: 24 * 3600 };

/**
 * The approval settings a PUT (or its simulation) would write: the body's, else the policy's
 * current ones, else the defaults; refused (400) when its rules' settings could never be met
 * under them.
 */
export function policyApproval(
  body: z.infer<typeof replacePolicyBody>,
  current: ApprovalSettings | undefined,
): ApprovalSettings {
  const approval = body.approval ?? current ?? DEFAULT_APPROVAL;
  if (body.approval === undefined) checkApprovalSettings(approval, body.rules);
  return approval;
}

const listItem = z.object({
  id: z.string(),
  name: z.string(),
  environment: z.string(),
  agents: z.array(z.string()),
  version: z.int(),
});

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/policies',
  operationId: 'list_policies',
  summary: 'List the policies of the environment',
  description:
    'Each with the agents it governs and its current version. Needs scope `policies:read`.',
  response: z.object({ data: z.array(listItem) }),
  errors: [],
  requires: { operation: 'read', scope: 'policies:read' },
});
export const policyOut = listItem
  .extend({
    defaults: z.object({ read: decision, write: decision, destructive: decision }),
    rules: z.array(rule),
    approval: z.object({
      requested_from: z.array(z.string()),
      ttl_seconds: z.int(),
      quorum: z.int().meta({ description: 'How many different deciders must approve' }),
      max_grant_seconds: z.int(),
      ...noticeSettingsSchema,
    }),
    updated_at: z.iso.datetime(),
    updated_by: z.string(),
  })
  .meta({ id: 'Policy' });

export const policyVersionParams = policyIdParam.extend({
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .meta({ description: 'A version number, as audit events name it' }),
});

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/policies/{id}',
  operationId: 'get_policy',
  summary: 'Get a policy in full',
  description:
    'Its defaults, rules, approval settings (who decides, how long an approval waits) and current version. Needs scope `policies:read`.',
  request: { params: policyIdParam },
  response: policyOut,
  errors: [],
  requires: { operation: 'read', scope: 'policies:read' },
  errorExamples: [{ when: 'unknown policy', error: new NotFoundError('Policy "billing-bot"') }],
});
registerConnectedUserOperation({
  method: 'get',
  path: '/v1/policies/{id}/versions/{version}',
  operationId: 'get_policy_version',
  summary: 'Get a policy as one of its versions was written',
  description:
    'Every version stays readable, so the version an audit event names shows exactly the rules that decided the call. Needs scope `policies:read`.',
  request: { params: policyVersionParams },
  response: policyOut,
  errors: [],
  requires: { operation: 'read', scope: 'policies:read' },
  errorExamples: [
    { when: 'unknown version', error: new NotFoundError('Version 7 of policy "default"') },
  ],
});
registerConnectedUserOperation({
  method: 'put',
  path: '/v1/policies/{id}',
  operationId: 'replace_policy',
  summary: 'Replace a policy, as a new version',
  description:
    'The body replaces the defaults and rules; `name`, `agents` and `approval` keep their values when left out. ' +
    'Creates version n+1, or version 1 for a new id. Two policies cannot govern the same agent (409). ' +
    'Needs scope `policies:manage`, which the standard keys agents call with lack, so an agent cannot loosen its own policy.',
  request: {
    params: policyIdParam,
    body: { content: { 'application/json': { schema: replacePolicyBody } }, required: true },
  },
  response: z.object({ id: z.string(), version: z.int(), updated_by: z.string() }),
  errors: [],
  requires: { operation: 'write', scope: 'policies:manage' },
  errorExamples: [
    {
      when: 'the agent has a policy',
      error: new ConflictError('Agent "billing-bot" is already governed by policy "default".', {
        agent: 'billing-bot',
        policy: 'default',
      }),
    },
  ],
});

export function present(policy: StoredPolicy) {
  return {
    id: policy.id,
    name: policy.name,
    environment: policy.environmentName,
    agents: policy.agents,
    version: policy.version,
    defaults: policy.defaults,
    rules: policy.rules,
    // Versions written before grants have no max_grant_seconds: grants were off; before quorums,
    // no quorum: one decision decided.
    approval: { max_grant_seconds: 0, quorum: 1, ...policy.approval },
    updated_at: policy.updatedAt.toISOString(),
    updated_by: policy.updatedBy,
  };
}

export type SaveOutcome =
  | { saved: true; version: number }
  /** The body names an agent another policy governs. */
  | { saved: false; reason: 'agent_claimed'; agent: string; claimedBy: string }
  /** Another version was written after the one the writer based theirs on. */
  | { saved: false; reason: 'moved_on' };

/** Rolls the transaction back when the policy moved on; never leaves this module. */
class MovedOn extends Error {}

/**
 * Writes `body` as the next version of policy `id`, as `PUT /v1/policies/{id}` takes it:
 * `name`, `agents` and `approval` keep their current values when left out, approval settings
 * its rules could never meet are refused (InvalidRequestError), and two policies never govern
 * the same agent. The API's PUT and the console's save both write through here.
 *
 * `basedOn`, when given, is the version the writer saw (null: none, the policy is new): if
 * another version was written since, nothing is written. The console passes the version its
 * simulation compared with, so a version saved there is never one nobody simulated against the
 * policy it replaces.
 */
export async function savePolicyVersion(
  sql: Sql,
  environmentId: string,
  id: string,
  body: z.infer<typeof replacePolicyBody>,
  updatedBy: string,
  basedOn?: number | null,
): Promise<SaveOutcome> {
  try {
    return await sql.begin(async (tx): Promise<SaveOutcome> => {
      const current = await findPolicy(tx, environmentId, id);
      const approval = policyApproval(body, current?.approval);
      const outcome = await replacePolicy(
        tx,
        environmentId,
        id,
        {
          name: body.name ?? current?.name ?? id,
          agents: body.agents ?? current?.agents ?? [],
          defaults: body.defaults,
          rules: body.rules,
          approval,
        },
        updatedBy,
      );
      if (!outcome.ok) {
        return {
          saved: false,
          reason: 'agent_claimed',
          agent: outcome.agent,
          claimedBy: outcome.claimedBy,
        };
      }
      // The new version is the one written under the row's lock: anything but the next after
      // `basedOn` means another was written in between.
      if (basedOn !== undefined && outcome.version !== (basedOn ?? 0) + 1) throw new MovedOn();
      return { saved: true, version: outcome.version };
    });
  } catch (error) {
    if (error instanceof MovedOn) return { saved: false, reason: 'moved_on' };
    throw error;
  }
}

/** Policies: list, read, replace; each replacement is a new version, and every version is kept. */
export function policyRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get(
    '/v1/policies',
    authorize({ operation: 'read', scope: 'policies:read' }),
    async (_req, res) => {
      const policies = await listPolicies(deps.sql, callerOf(res).environmentId);
      res.json({
        data: policies.map((p) => ({
          id: p.id,
          name: p.name,
          environment: p.environmentName,
          agents: p.agents,
          version: p.version,
        })),
      });
    },
  );

  router.get(
    '/v1/policies/:id',
    authorize({ operation: 'read', scope: 'policies:read' }),
    async (req, res) => {
      const { id } = parse(policyIdParam, req.params, 'path');
      const policy = await findPolicy(deps.sql, callerOf(res).environmentId, id);
      if (!policy) throw new NotFoundError(`Policy "${id}"`);
      res.json(present(policy));
    },
  );

  router.get(
    '/v1/policies/:id/versions/:version',
    authorize({ operation: 'read', scope: 'policies:read' }),
    async (req, res) => {
      const { id, version } = parse(policyVersionParams, req.params, 'path');
      const policy = await findPolicyVersion(deps.sql, callerOf(res).environmentId, id, version);
      if (!policy) throw new NotFoundError(`Version ${String(version)} of policy "${id}"`);
      res.json(present(policy));
    },
  );

  // Separation of duties: the keys agents call with lack `policies:manage`, so a governed agent
  // cannot rewrite the policy that governs it, nor move itself under another.
  router.put(
    '/v1/policies/:id',
    authorize({ operation: 'write', scope: 'policies:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const { id } = parse(policyIdParam, req.params, 'path');
      const body = parse(replacePolicyBody, req.body, 'body');
      const outcome = await savePolicyVersion(
        deps.sql,
        caller.environmentId,
        id,
        body,
        caller.agentId,
      );
      if (!outcome.saved) {
        if (outcome.reason === 'moved_on') {
          throw new Error('a save that names no base version found the policy moved on');
        }
        throw new ConflictError(
          `Agent "${outcome.agent}" is already governed by policy "${outcome.claimedBy}".`,
          { agent: outcome.agent, policy: outcome.claimedBy },
        );
      }
      res.json({ id, version: outcome.version, updated_by: caller.agentId });
    },
  );
  return router;
}
