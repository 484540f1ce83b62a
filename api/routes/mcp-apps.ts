import { Router, type Response } from 'express';
import { z } from 'zod';
import { MCP_APP_ID } from '../../activities/apps/directory.js';
import { validAccessToken } from '../../activities/connections/access-token.js';
import {
  findMcpAppStanding,
  listMcpAppStandings,
  type McpAppStanding,
} from '../../activities/db/mcp-apps.js';
import type { RegistryActor } from '../../activities/mcp-apps/registry-audit.js';
import {
  acceptMcpAppSnapshot,
  refreshMcpApp,
  registerMcpApp,
  removeMcpApp,
  updateMcpAppSettings,
  type RegistryDeps,
} from '../../activities/mcp-apps/registry.js';
import type { ApiDeps } from '../deps.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';
import { mcpAppSchema, presentMcpApp } from '../presenters/mcp-apps.js';
import {
  acceptMcpAppBody,
  appPath,
  refuseProtoOverride,
  registerMcpAppBody,
  updateMcpAppBody,
} from '../mcp-apps/inputs.js';
import { registryFailure } from './mcp-app-errors.js';

// ---- Operations ----

const unknownApp = { when: 'unknown app', error: new NotFoundError('MCP app "linear-mcp"') };

registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-apps',
  operationId: 'register_mcp_app',
  summary: 'Register a remote MCP server as an app',
  description:
    'Lists the server\'s tools first (discovery and `tools/list` with the MCP SDK\'s client): a server that answers without authorization gets `auth: "none"` and its tools as snapshot 1, accepted by this registration; one that answers 401 with OAuth protected resource metadata gets `auth: "oauth"` and no tools until a user connects and the app is refreshed. A server that cannot be reached answers 503 `upstream_unavailable`, one too slow 504 `upstream_timeout`; one that is not an MCP server, or lists tools beyond the limits, 400 naming `server_url`.',
  scope: 'apps:manage',
  request: {
    body: { content: { 'application/json': { schema: registerMcpAppBody } }, required: true },
  },
  errorExamples: [
    {
      when: 'id taken',
      error: new ConflictError('The environment already has an app "linear-mcp".'),
    },
  ],
  output: mcpAppSchema,
});
registerManagementOperation({
  method: 'get',
  path: '/v1/mcp-apps',
  operationId: 'list_mcp_apps',
  summary: 'List the remote MCP servers registered as apps',
  description: 'Each with its tools, their grades and whether they may be called, by id.',
  scope: 'apps:read',
  output: z.array(mcpAppSchema).meta({ id: 'list_mcp_apps_output' }),
});
registerManagementOperation({
  method: 'get',
  path: '/v1/mcp-apps/{app}',
  operationId: 'get_mcp_app',
  summary: 'Get a remote MCP app, with its pending changes',
  description:
    '`snapshot.pending` and `pending_tools` show what the newest listing changed against the accepted snapshot: what accepting it would let agents call.',
  scope: 'apps:read',
  request: { params: appPath },
  errorExamples: [unknownApp],
  output: mcpAppSchema,
});
registerManagementOperation({
  method: 'patch',
  path: '/v1/mcp-apps/{app}',
  operationId: 'update_mcp_app',
  summary: 'Change the name, tool allow-list or grade overrides of a remote MCP app',
  description:
    'The server URL is what the app is: register another app for another server. Takes effect for every call from now on, held calls included when they run.',
  scope: 'apps:manage',
  request: {
    params: appPath,
    body: { content: { 'application/json': { schema: updateMcpAppBody } }, required: true },
  },
  errorExamples: [unknownApp],
  output: mcpAppSchema,
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-apps/{app}/refresh',
  operationId: 'refresh_mcp_app',
  summary: "List a remote MCP app's tools again",
  description:
    'A listing that differs from the newest snapshot is kept as a new version; one that differs from the accepted snapshot is pending, recorded in the audit log (`<app>.*`, `via: "operator"`, `blocked`), and the tools it adds or changes are refused until an operator accepts it. An app with `auth: "oauth"` is listed with a token of its most recently used active connection (409 `conflict` when it has none). A server that cannot be reached or does not answer as an MCP server answers 503 `upstream_unavailable`, one too slow 504 `upstream_timeout`.',
  scope: 'apps:manage',
  request: { params: appPath },
  errorExamples: [unknownApp],
  output: mcpAppSchema,
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-apps/{app}/accept',
  operationId: 'accept_mcp_app_snapshot',
  summary: 'Accept a snapshot of a remote MCP app’s tools',
  description:
    'Calls use the accepted snapshot’s tool definitions; accepting the pending one lets its new and changed tools be called. Any kept version may be accepted, an older one too.',
  scope: 'apps:manage',
  request: {
    params: appPath,
    body: { content: { 'application/json': { schema: acceptMcpAppBody } }, required: true },
  },
  errorExamples: [
    unknownApp,
    { when: 'no such snapshot', error: new NotFoundError('Snapshot v7 of MCP app "linear-mcp"') },
  ],
  output: mcpAppSchema,
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/mcp-apps/{app}',
  operationId: 'delete_mcp_app',
  summary: 'Delete a remote MCP app',
  description:
    "Its snapshots go, and its users' connections are revoked (tokens erased): an app registered later under this id may be another server. Held calls to its tools are refused when they would run.",
  scope: 'apps:manage',
  request: { params: appPath },
  errorExamples: [unknownApp],
  output: z
    .object({
      app: z.string(),
      deleted: z.literal(true),
      revoked_connections: z.int().meta({ description: 'Connections revoked with it' }),
    })
    .meta({ id: 'delete_mcp_app_output' }),
});

/** The app an operation names, or 404: a catalog id or a malformed one names no MCP app. */
function appIdOf(params: unknown): string {
  const { app } = parse(appPath, params, 'path');
  if (!MCP_APP_ID.test(app)) throw new NotFoundError(`MCP app "${app}"`);
  return app;
}

function actorOf(res: Response): RegistryActor {
  const caller = callerOf(res);
  return {
    environmentId: caller.environmentId,
    agentId: caller.agentId,
    channel: 'api',
    traceId: res.locals.traceId,
  };
}

/**
 * Remote MCP servers registered as apps, per environment: an app of another environment is not
 * found. The work is the registry's (activities/mcp-apps/registry.ts).
 */
export function mcpAppRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'apps:read' });
  const manage = authorize({ operation: 'write', scope: 'apps:manage' });
  const registry: RegistryDeps = {
    sql: deps.sql,
    config: deps.config,
    accessToken: (connectionId) => validAccessToken(deps, connectionId),
  };
  const standingOf = async (res: Response, id: string): Promise<McpAppStanding> => {
    const standing = await findMcpAppStanding(deps.sql, callerOf(res).environmentId, id);
    if (!standing) throw new NotFoundError(`MCP app "${id}"`);
    return standing;
  };

  router.post('/v1/mcp-apps', manage, async (req, res) => {
    refuseProtoOverride(req.body);
    const body = parse(registerMcpAppBody, req.body, 'body');
    const standing = await registerMcpApp(registry, actorOf(res), {
      id: body.id,
      name: body.name,
      serverUrl: body.server_url,
      toolAllowlist: body.tool_allowlist ?? null,
      gradeOverrides: body.grade_overrides ?? {},
      trustAnnotations: body.trust_annotations ?? false,
    }).catch(registryFailure('register'));
    res.json({ data: presentMcpApp(standing) });
  });

  router.get('/v1/mcp-apps', read, async (_req, res) => {
    const standings = await listMcpAppStandings(deps.sql, callerOf(res).environmentId);
    res.json({ data: standings.map(presentMcpApp) });
  });

  router.get('/v1/mcp-apps/:app', read, async (req, res) => {
    res.json({ data: presentMcpApp(await standingOf(res, appIdOf(req.params))) });
  });

  router.patch('/v1/mcp-apps/:app', manage, async (req, res) => {
    const id = appIdOf(req.params);
    refuseProtoOverride(req.body);
    const body = parse(updateMcpAppBody, req.body, 'body');
    await updateMcpAppSettings(registry, actorOf(res), id, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.tool_allowlist === undefined ? {} : { toolAllowlist: body.tool_allowlist }),
      ...(body.grade_overrides === undefined ? {} : { gradeOverrides: body.grade_overrides }),
    }).catch(registryFailure('update'));
    res.json({ data: presentMcpApp(await standingOf(res, id)) });
  });

  router.post('/v1/mcp-apps/:app/refresh', manage, async (req, res) => {
    const id = appIdOf(req.params);
    expectNoBody(req);
    const refreshed = await refreshMcpApp(registry, actorOf(res), id).catch(
      registryFailure('refresh'),
    );
    res.json({ data: presentMcpApp(refreshed.standing) });
  });

  router.post('/v1/mcp-apps/:app/accept', manage, async (req, res) => {
    const id = appIdOf(req.params);
    const { version } = parse(acceptMcpAppBody, req.body, 'body');
    const standing = await acceptMcpAppSnapshot(registry, actorOf(res), id, version).catch(
      registryFailure('accept'),
    );
    res.json({ data: presentMcpApp(standing) });
  });

  router.delete('/v1/mcp-apps/:app', manage, async (req, res) => {
    const id = appIdOf(req.params);
    expectNoBody(req);
    const removed = await removeMcpApp(registry, actorOf(res), id).catch(registryFailure('delete'));
    res.json({
      data: { app: removed.app.id, deleted: true, revoked_connections: removed.revokedConnections },
    });
  });

  return router;
}
