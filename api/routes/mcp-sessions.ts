import { Router } from 'express';
import { z } from 'zod';
import { createMcpSession, revokeMcpSession } from '../../activities/db/mcp-sessions.js';
import { findAction, findApp } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../app.js';
import { InsufficientAccessError, NotFoundError } from '../errors.js';
import { authorize, callerOf, checkAccess } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { uuidString } from '../http/ids.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { iso } from '../presenters/timestamps.js';

const DEFAULT_TTL_SECONDS = 24 * 60 * 60;
const MIN_TTL_SECONDS = 60;

const appId = z
  .string()
  .min(1)
  .max(100)
  .refine((id) => findApp(id) !== undefined, 'is not a catalog app');
const actionId = z
  .string()
  .min(3)
  .max(200)
  .refine((id) => findAction(id) !== undefined, 'is not a catalog action (`<app>.<action>`)');

function createSessionBody(maxTtlSeconds: number) {
  return z
    .strictObject({
      user: externalUserId.meta({ description: 'Your own id for the end user the agent acts for' }),
      apps: z
        .array(appId)
        .min(1)
        .max(100)
        .optional()
        .meta({ description: 'Only these apps’ tools (default: every app)' }),
      actions: z
        .array(actionId)
        .min(1)
        .max(500)
        .optional()
        .meta({ description: 'Only these actions, as `<app>.<action>` (default: every action)' }),
      ttl_seconds: z
        .int()
        .min(MIN_TTL_SECONDS)
        .max(maxTtlSeconds)
        .default(Math.min(DEFAULT_TTL_SECONDS, maxTtlSeconds))
        .meta({
          description: `Lifetime of the address, default 24 hours; at most MCP_SESSION_MAX_TTL_SECONDS`,
        }),
      show_approval_links: z
        .boolean()
        .default(false)
        .meta({
          description:
            'Whether a held call’s result carries the hosted approval page’s link. Whoever opens it ' +
            'decides as the first approver the policy asks, so allow it only when the person at the ' +
            'MCP client may decide the agent’s calls. Needs a key with scope approvals:decide.',
        }),
      include_unconnected_apps: z
        .boolean()
        .default(false)
        .meta({
          description:
            'Also list the tools of apps the user has not connected; calling one offers the ' +
            'hosted connect link.',
        }),
    })
    .meta({ id: 'CreateMcpSession' });
}

const sessionSchema = z
  .object({
    id: z.string(),
    url: z.url().meta({
      description:
        'The MCP server address (Streamable HTTP) for the user; it carries the secret, shown only now',
    }),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'McpSession' });

const revokedSessionSchema = z
  .object({ id: z.string(), status: z.literal('revoked'), revoked_at: z.iso.datetime() })
  .meta({ id: 'RevokedMcpSession' });

const sessionPath = z.strictObject({ id: uuidString() });

registerConnectedUserOperation({
  method: 'post',
  path: '/v1/mcp/sessions',
  operationId: 'create_mcp_session',
  summary: 'Mint an MCP server address for one of your users',
  description:
    'Point any MCP client (Streamable HTTP) at the `url`: it carries the session’s secret, shown only now. ' +
    'Its tools are the catalog actions the user can use, called as this key’s agent under its policy, approvals and audit. ' +
    '`show_approval_links` needs a key with scope `approvals:decide`, so an agent’s own key cannot hand it links that decide its own calls.',
  request: {
    body: {
      content: { 'application/json': { schema: createSessionBody(365 * 24 * 3600) } },
      required: true,
    },
  },
  response: sessionSchema,
  status: 201,
  errors: [],
  requires: { operation: 'call' },
  errorExamples: [
    {
      when: 'show_approval_links without approvals:decide',
      error: new InsufficientAccessError('This key lacks the scope "approvals:decide".', {
        required_scope: 'approvals:decide',
      }),
    },
  ],
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/mcp/sessions/{id}',
  operationId: 'revoke_mcp_session',
  summary: 'Revoke an MCP session',
  description:
    'Its address answers 401 from now on. Revoking a revoked session answers the same again.',
  request: { params: sessionPath },
  response: revokedSessionSchema,
  errors: [],
  requires: { operation: 'write' },
  errorExamples: [{ when: 'unknown session', error: new NotFoundError('MCP session') }],
});

/** `POST /v1/mcp/sessions` and `DELETE /v1/mcp/sessions/{id}` (issue 13). */
export function mcpSessionRoutes(deps: ApiDeps): Router {
  const router = Router();
  const body = createSessionBody(deps.config.mcp.sessionMaxTtlSeconds);
  // The session calls as this key, so only a key that may call can mint one.
  router.post('/v1/mcp/sessions', authorize({ operation: 'call' }), async (req, res) => {
    const caller = callerOf(res);
    const input = parse(body, req.body, 'body');
    // A decision link decides as the approver it names: in the session of a key that may not
    // decide (the agent's own, say) it would let the agent approve its own calls (DESIGN.md §3).
    if (input.show_approval_links) {
      checkAccess(caller, { operation: 'write', scope: 'approvals:decide' });
    }
    const { session, secret } = await createMcpSession(deps.sql, {
      environmentId: caller.environmentId,
      keyId: caller.keyId,
      agentId: caller.agentId,
      userExternalId: input.user,
      apps: input.apps ? [...new Set(input.apps)] : null,
      actions: input.actions ? [...new Set(input.actions)] : null,
      showApprovalLinks: input.show_approval_links,
      includeUnconnectedApps: input.include_unconnected_apps,
      ttlSeconds: input.ttl_seconds,
    });
    res.status(201).json({
      id: session.id,
      url: `${deps.config.api.publicUrl}/mcp/${secret}`,
      expires_at: iso(session.expiresAt),
    });
  });
  router.delete('/v1/mcp/sessions/:id', authorize({ operation: 'write' }), async (req, res) => {
    const caller = callerOf(res);
    // An id that is no UUID names no session: 404, like an unknown or another environment's.
    const path = sessionPath.safeParse(req.params);
    const session = path.success
      ? await revokeMcpSession(deps.sql, caller.environmentId, path.data.id)
      : null;
    if (!session?.revokedAt) throw new NotFoundError('MCP session');
    res.json({ id: session.id, status: 'revoked', revoked_at: iso(session.revokedAt) });
  });
  return router;
}
