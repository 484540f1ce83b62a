import { Router } from 'express';
import { z } from 'zod';
import { findEnvironmentAppRecord, MCP_APP_ID } from '../../activities/apps/directory.js';
import { createMcpSession, revokeMcpSession } from '../../activities/db/mcp-sessions.js';
import { openApiAppExists } from '../../activities/db/openapi-apps.js';
import type { Sql } from '../../infra/database/client.js';
import { findAction, findApp } from '../../workflows/catalog/index.js';
import { MCP_TOOL_NAME } from '../../workflows/catalog/mcp-tools.js';
import type { ApiDeps } from '../deps.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { uuidString } from '../http/ids.js';
import { parse } from '../http/validate.js';
import { sessionUrl } from '../mcp/session-address.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { iso } from '../presenters/timestamps.js';

const DEFAULT_TTL_SECONDS = 24 * 60 * 60;

const SHOW_APPROVAL_LINKS_RETIRED =
  'show_approval_links is retired: a decision link is never given to the agent (an MCP result ' +
  'reaches the model), whatever key mints the session. People get decision links from the ' +
  'approval.requested webhook or from an operator (gatehouse approvals link); send false or ' +
  'leave it out.';

const sessionNotFound = () => new NotFoundError('MCP session');
const MIN_TTL_SECONDS = 60;

/** A remote MCP tool's action name, `<app>.<tool>`: its app is then looked up (appsOf). */
function remoteAction(id: string): { app: string; tool: string } | null {
  const dot = id.indexOf('.');
  const app = id.slice(0, dot);
  const tool = id.slice(dot + 1);
  if (dot < 0 || findApp(app) || !MCP_APP_ID.test(app) || !MCP_TOOL_NAME.test(tool)) return null;
  return { app, tool };
}

const appId = z
  .string()
  .min(1)
  .max(100)
  .refine(
    (id) => findApp(id) !== undefined || MCP_APP_ID.test(id),
    'is not a catalog app nor a remote MCP app id',
  );
const actionId = z
  .string()
  .min(3)
  .max(200)
  .refine(
    (id) => findAction(id) !== undefined || remoteAction(id) !== null,
    'is not a catalog action nor a remote MCP tool (`<app>.<action>`)',
  );

/**
 * The filters' remote MCP apps must be apps of the caller's environment; their tools are not
 * checked against a snapshot: a session may name a tool that will be accepted later.
 */
async function checkRemoteApps(
  sql: Sql,
  environmentId: string,
  input: { apps?: string[] | undefined; actions?: string[] | undefined },
): Promise<void> {
  const named = [
    ...(input.apps ?? []).map((id, index) => ({ app: id, path: `apps.${String(index)}` })),
    ...(input.actions ?? []).flatMap((id, index) => {
      const remote = findAction(id) ? null : remoteAction(id);
      return remote ? [{ app: remote.app, path: `actions.${String(index)}` }] : [];
    }),
  ].filter((entry) => !findApp(entry.app));
  for (const entry of named) {
    // An OpenAPI app's operations are tools too (`<app>__<operation>`).
    const known =
      (await findEnvironmentAppRecord(sql, environmentId, entry.app)) !== null ||
      (await openApiAppExists(sql, environmentId, entry.app));
    if (!known) {
      throw new InvalidRequestError(`Unknown app "${entry.app}" in ${entry.path}.`, [
        { path: entry.path, message: 'is not an app of this environment' },
      ]);
    }
  }
}

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
        .optional()
        .meta({
          description:
            'Retired: a held call’s result never carries a decision link, whatever the key. ' +
            '`false` is accepted for old clients; `true` is refused (400).',
          deprecated: true,
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
        'The MCP server address (Streamable HTTP) for the user, `<PUBLIC_URL>/mcp/gkmcp_…/mcp`: the secret is in its path, shown only now. Give it to the client as it is; the address without the final `/mcp` answers too.',
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
    'A held call answers with its approval (id, `expires_at`, `requested_from`) and never with a decision link: people get those from the `approval.requested` webhook or `gatehouse approvals link`. ' +
    '`show_approval_links: true` is refused (400); `false` is accepted.',
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
      when: 'show_approval_links: true',
      error: new InvalidRequestError(SHOW_APPROVAL_LINKS_RETIRED, [
        { path: 'show_approval_links', message: 'is retired; only false is accepted' },
      ]),
    },
  ],
});
registerConnectedUserOperation({
  method: 'delete',
  path: '/v1/mcp/sessions/{id}',
  operationId: 'revoke_mcp_session',
  summary: 'Revoke an MCP session',
  description:
    'Its address answers 401 from now on. Revoking a revoked session answers the same again. ' +
    'A key may revoke the sessions its own agent minted; another agent’s only with scope `mcp_sessions:manage` (full keys have it). ' +
    'Any other session answers 404, as an unknown one does.',
  request: { params: sessionPath },
  response: revokedSessionSchema,
  errors: [],
  requires: { operation: 'write' },
  errorExamples: [
    { when: 'unknown session, or another agent’s without the scope', error: sessionNotFound() },
  ],
});

/** `POST /v1/mcp/sessions` and `DELETE /v1/mcp/sessions/{id}`. */
export function mcpSessionRoutes(deps: ApiDeps): Router {
  const router = Router();
  const body = createSessionBody(deps.config.mcp.sessionMaxTtlSeconds);
  // The session calls as this key, so only a key that may call can mint one.
  router.post('/v1/mcp/sessions', authorize({ operation: 'call' }), async (req, res) => {
    const caller = callerOf(res);
    const input = parse(body, req.body, 'body');
    await checkRemoteApps(deps.sql, caller.environmentId, input);
    // Whatever key mints it, a session's results reach the model, and so the governed agent: a
    // decision link there would let the agent decide its own calls (README, "Decision links").
    if (input.show_approval_links === true) {
      throw new InvalidRequestError(SHOW_APPROVAL_LINKS_RETIRED, [
        { path: 'show_approval_links', message: 'is retired; only false is accepted' },
      ]);
    }
    const { session, secret } = await createMcpSession(deps.sql, {
      environmentId: caller.environmentId,
      keyId: caller.keyId,
      agentId: caller.agentId,
      userExternalId: input.user,
      apps: input.apps ? [...new Set(input.apps)] : null,
      actions: input.actions ? [...new Set(input.actions)] : null,
      includeUnconnectedApps: input.include_unconnected_apps,
      ttlSeconds: input.ttl_seconds,
    });
    res.status(201).json({
      id: session.id,
      url: sessionUrl(deps.config.api.publicUrl, secret),
      expires_at: iso(session.expiresAt),
    });
  });
  router.delete('/v1/mcp/sessions/:id', authorize({ operation: 'write' }), async (req, res) => {
    const caller = callerOf(res);
    // An id that is no UUID names no session: 404, like an unknown or another environment's.
    // Another agent's session is 404 too unless the key may manage sessions: the session ids
    // of other agents are never shown to a key, so it learns nothing from the answer.
    const path = sessionPath.safeParse(req.params);
    const session = path.success
      ? await revokeMcpSession(deps.sql, caller.environmentId, path.data.id, {
          agentId: caller.agentId,
          mayManage: caller.scopes.includes('mcp_sessions:manage'),
        })
      : null;
    if (!session?.revokedAt) throw sessionNotFound();
    res.json({ id: session.id, status: 'revoked', revoked_at: iso(session.revokedAt) });
  });
  return router;
}
