import { Router, type Response } from 'express';
import { z } from 'zod';
import { MCP_APP_ID } from '../../activities/apps/directory.js';
import {
  findOpenApiAppStanding,
  listOpenApiAppStandings,
  type OpenApiAppStanding,
} from '../../activities/db/openapi-apps.js';
import type { RegistryActor } from '../../activities/mcp-apps/registry-audit.js';
import {
  acceptOpenApiAppSnapshot,
  OpenApiRegistryError,
  refreshOpenApiApp,
  registerOpenApiApp,
  removeOpenApiApp,
  updateOpenApiAppSettings,
  type OpenApiRegistryDeps,
} from '../../activities/openapi-registry/registry.js';
import type { ApiDeps } from '../deps.js';
import { ApiError, ConflictError, InvalidRequestError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';
import { openApiAppSchema, presentOpenApiApp } from '../presenters/openapi-apps.js';
import {
  acceptOpenApiAppBody,
  documentText,
  openApiAppPath,
  refreshOpenApiAppBody,
  registerOpenApiAppBody,
  updateOpenApiAppBody,
} from '../openapi-apps/inputs.js';
import { refuseProtoOverride } from '../mcp-apps/inputs.js';

// ---- Operations ----

const unknownApp = { when: 'unknown app', error: new NotFoundError('OpenAPI app "github"') };

registerManagementOperation({
  method: 'post',
  path: '/v1/openapi-apps',
  operationId: 'register_openapi_app',
  summary: 'Import a REST API from its OpenAPI document as an app',
  description:
    "Imports the document (given inline, or fetched once from `document_url`) in a worker thread within the importer's limits: each operation becomes an action `<app>.<operation>`, graded by the operator's override, else the document's `x-gatehouse-scope`, else its method, and kept as snapshot 1, accepted by this registration unless the document's own grades decide one (then an operator accepts it, or registers with `trust_document_grades`). A document that cannot be imported is 400 naming `document` (or `document_url`, `base_url`) and the limit it went past.",
  scope: 'apps:manage',
  request: {
    body: { content: { 'application/json': { schema: registerOpenApiAppBody } }, required: true },
  },
  errorExamples: [
    { when: 'id taken', error: new ConflictError('The environment already has an app "github".') },
  ],
  output: openApiAppSchema,
});
registerManagementOperation({
  method: 'get',
  path: '/v1/openapi-apps',
  operationId: 'list_openapi_apps',
  summary: 'List the REST APIs imported as apps',
  description: 'Each with its operations, their grades and whether they may be called, by id.',
  scope: 'apps:read',
  output: z.array(openApiAppSchema).meta({ id: 'list_openapi_apps_output' }),
});
registerManagementOperation({
  method: 'get',
  path: '/v1/openapi-apps/{app}',
  operationId: 'get_openapi_app',
  summary: 'Get an OpenAPI app, with its pending changes',
  description:
    '`snapshot.pending` shows what the newest import changed against the accepted snapshot: what accepting it would let agents call.',
  scope: 'apps:read',
  request: { params: openApiAppPath },
  errorExamples: [unknownApp],
  output: openApiAppSchema,
});
registerManagementOperation({
  method: 'patch',
  path: '/v1/openapi-apps/{app}',
  operationId: 'update_openapi_app',
  summary: 'Change the name, base URL, allow-list or grade overrides of an OpenAPI app',
  description:
    'Takes effect for every call from now on, held calls included when they run. An allow-list that adds operations the snapshot left out takes effect at the next refresh.',
  scope: 'apps:manage',
  request: {
    params: openApiAppPath,
    body: { content: { 'application/json': { schema: updateOpenApiAppBody } }, required: true },
  },
  errorExamples: [unknownApp],
  output: openApiAppSchema,
});
registerManagementOperation({
  method: 'post',
  path: '/v1/openapi-apps/{app}/refresh',
  operationId: 'refresh_openapi_app',
  summary: "Import an OpenAPI app's document again",
  description:
    'From `document_url` again, or the `document` given. An import whose operations differ from the newest snapshot is kept as a new version; one that differs from the accepted snapshot is pending, recorded in the audit log (`<app>.*`, `via: "operator"`, `blocked`), and the operations it adds or changes are refused until an operator accepts it. The base URL stays pinned.',
  scope: 'apps:manage',
  request: {
    params: openApiAppPath,
    body: { content: { 'application/json': { schema: refreshOpenApiAppBody } }, required: false },
  },
  errorExamples: [unknownApp],
  output: openApiAppSchema,
});
registerManagementOperation({
  method: 'post',
  path: '/v1/openapi-apps/{app}/accept',
  operationId: 'accept_openapi_app_snapshot',
  summary: 'Accept a snapshot of an OpenAPI app’s operations',
  description:
    'Calls use the accepted snapshot’s operation definitions; accepting the pending one lets its new and changed operations be called. Any kept version may be accepted, an older one too.',
  scope: 'apps:manage',
  request: {
    params: openApiAppPath,
    body: { content: { 'application/json': { schema: acceptOpenApiAppBody } }, required: true },
  },
  errorExamples: [
    unknownApp,
    { when: 'no such snapshot', error: new NotFoundError('Snapshot v7 of OpenAPI app "github"') },
  ],
  output: openApiAppSchema,
});
registerManagementOperation({
  method: 'delete',
  path: '/v1/openapi-apps/{app}',
  operationId: 'delete_openapi_app',
  summary: 'Delete an OpenAPI app',
  description:
    'Its snapshots go with it. Held calls to its operations are refused when they would run.',
  scope: 'apps:manage',
  request: { params: openApiAppPath },
  errorExamples: [unknownApp],
  output: z
    .object({ app: z.string(), deleted: z.literal(true) })
    .meta({ id: 'delete_openapi_app_output' }),
});

/** A registry refusal in the API's envelope. */
function registryFailure(error: unknown): never {
  if (!(error instanceof OpenApiRegistryError)) throw error;
  switch (error.kind) {
    case 'catalog_id':
    case 'invalid':
    case 'no_document': {
      const path = error.field ?? 'body';
      throw new InvalidRequestError(error.message, [
        {
          path,
          message: error.limit ? `over the import limit ${error.limit}` : error.message,
        },
      ]);
    }
    case 'id_taken':
      throw new ConflictError(error.message);
    case 'not_found':
    case 'no_such_version':
      throw new NotFoundError(error.message);
    case 'timeout':
      throw new ApiError('upstream_timeout', error.message, { upstream_status: 504 });
    case 'unreachable':
      throw new ApiError('upstream_unavailable', error.message, { upstream_status: 503 });
  }
}

/** The app an operation names, or 404: a malformed id names no app. */
function appIdOf(params: unknown): string {
  const { app } = parse(openApiAppPath, params, 'path');
  if (!MCP_APP_ID.test(app)) throw new NotFoundError(`OpenAPI app "${app}"`);
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
 * REST APIs imported from their OpenAPI documents as apps, per environment: an app of another
 * environment is not found. The work is the registry's (activities/openapi-registry).
 */
export function openApiAppRoutes(deps: ApiDeps): Router {
  const router = Router();
  const read = authorize({ operation: 'read', scope: 'apps:read' });
  const manage = authorize({ operation: 'write', scope: 'apps:manage' });
  const registry: OpenApiRegistryDeps = { sql: deps.sql, config: deps.config };
  const standingOf = async (res: Response, id: string): Promise<OpenApiAppStanding> => {
    const standing = await findOpenApiAppStanding(deps.sql, callerOf(res).environmentId, id);
    if (!standing) throw new NotFoundError(`OpenAPI app "${id}"`);
    return standing;
  };

  router.post('/v1/openapi-apps', manage, async (req, res) => {
    refuseProtoOverride(req.body);
    const body = parse(registerOpenApiAppBody, req.body, 'body');
    const standing = await registerOpenApiApp(registry, actorOf(res), {
      id: body.id,
      name: body.name,
      source:
        body.document !== undefined
          ? { document: documentText(body.document) }
          : { documentUrl: body.document_url ?? '' },
      baseUrl: body.base_url ?? null,
      operationAllowlist: body.operation_allowlist ?? null,
      gradeOverrides: body.grade_overrides ?? {},
      trustDocumentGrades: body.trust_document_grades ?? false,
      authScheme: body.auth_scheme ?? null,
    }).catch(registryFailure);
    res.json({ data: presentOpenApiApp(standing) });
  });

  router.get('/v1/openapi-apps', read, async (_req, res) => {
    const standings = await listOpenApiAppStandings(deps.sql, callerOf(res).environmentId);
    res.json({ data: standings.map(presentOpenApiApp) });
  });

  router.get('/v1/openapi-apps/:app', read, async (req, res) => {
    res.json({ data: presentOpenApiApp(await standingOf(res, appIdOf(req.params))) });
  });

  router.patch('/v1/openapi-apps/:app', manage, async (req, res) => {
    const id = appIdOf(req.params);
    refuseProtoOverride(req.body);
    const body = parse(updateOpenApiAppBody, req.body, 'body');
    await updateOpenApiAppSettings(registry, actorOf(res), id, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.base_url === undefined ? {} : { baseUrl: body.base_url }),
      ...(body.operation_allowlist === undefined
        ? {}
        : { operationAllowlist: body.operation_allowlist }),
      ...(body.grade_overrides === undefined ? {} : { gradeOverrides: body.grade_overrides }),
      ...(body.auth_scheme === undefined ? {} : { authScheme: body.auth_scheme }),
    }).catch(registryFailure);
    res.json({ data: presentOpenApiApp(await standingOf(res, id)) });
  });

  router.post('/v1/openapi-apps/:app/refresh', manage, async (req, res) => {
    const id = appIdOf(req.params);
    const body = parse(refreshOpenApiAppBody, req.body ?? {}, 'body');
    const document = body.document === undefined ? null : documentText(body.document);
    const refreshed = await refreshOpenApiApp(registry, actorOf(res), id, document).catch(
      registryFailure,
    );
    res.json({ data: presentOpenApiApp(refreshed.standing) });
  });

  router.post('/v1/openapi-apps/:app/accept', manage, async (req, res) => {
    const id = appIdOf(req.params);
    const { version } = parse(acceptOpenApiAppBody, req.body, 'body');
    const standing = await acceptOpenApiAppSnapshot(registry, actorOf(res), id, version).catch(
      registryFailure,
    );
    res.json({ data: presentOpenApiApp(standing) });
  });

  router.delete('/v1/openapi-apps/:app', manage, async (req, res) => {
    const id = appIdOf(req.params);
    expectNoBody(req);
    const removed = await removeOpenApiApp(registry, actorOf(res), id).catch(registryFailure);
    res.json({ data: { app: removed.id, deleted: true } });
  });

  return router;
}
