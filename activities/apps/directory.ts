/**
 * The one place that answers "is this an app (an action) of this environment": the
 * compiled catalog, then the remote MCP servers the environment registered. Catalog names are
 * answered without a database read; an MCP app's ids can never be a catalog id (registration
 * refuses it), so the order never hides one behind the other.
 */
import type { Db } from '../../infra/database/client.js';
import {
  findAction,
  findApp,
  listActions,
  listApps,
  type ActionDefinition,
  type AppDefinition,
  type CallScope,
} from '../../workflows/catalog/index.js';
import type { McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import {
  findMcpApp,
  findMcpAppStanding,
  listMcpAppStandings,
  type McpApp,
  type McpAppStanding,
} from '../db/mcp-apps.js';
import { toolStanding, type ToolStanding } from '../mcp-apps/tool-standing.js';
import {
  findOpenApiAppStanding,
  findOpenApiOperationStanding,
  listOpenApiAppStandings,
  type OpenApiAppStanding,
} from '../db/openapi-apps.js';
import {
  callableOperations,
  operationStanding,
  type OperationStanding,
} from '../openapi-registry/operation-standing.js';

export type DirectoryApp =
  | { kind: 'catalog'; id: string; name: string; app: AppDefinition }
  | { kind: 'mcp'; id: string; name: string; standing: McpAppStanding }
  | { kind: 'openapi'; id: string; name: string; standing: OpenApiAppStanding };

/** An action as callers see it: a catalog action, or a tool of a remote MCP app. */
export type DirectoryAction =
  | {
      kind: 'catalog';
      /** `<app>.<name>`. */
      id: string;
      app: string;
      name: string;
      scope: CallScope;
      description: string;
      action: ActionDefinition;
    }
  | {
      kind: 'mcp';
      id: string;
      app: string;
      name: string;
      /** The tool's grade (override, else its annotations). */
      scope: CallScope;
      description: string;
      /** The definition calls use: the accepted one, or the newest listing's when not accepted. */
      tool: McpToolDefinition;
      standing: McpAppStanding;
      /** Whether it may be called now, and why not (tool pinning). */
      callable: ToolStanding;
    }
  | {
      kind: 'openapi';
      id: string;
      app: string;
      name: string;
      /** The operation's grade (override, else the document's or its method's). */
      scope: CallScope;
      description: string;
      standing: OpenApiAppStanding;
      /** Whether it may be called now, and why not (operation pinning, credentials). */
      callable: OperationStanding;
    };

/** App ids of remote MCP servers: what registration accepts, so nothing else is looked up. */
export const MCP_APP_ID = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

function catalogEntry(app: AppDefinition): DirectoryApp {
  return { kind: 'catalog', id: app.id, name: app.name, app };
}

function mcpEntry(standing: McpAppStanding): DirectoryApp {
  return { kind: 'mcp', id: standing.app.id, name: standing.app.name, standing };
}

function openApiEntry(standing: OpenApiAppStanding): DirectoryApp {
  return { kind: 'openapi', id: standing.app.id, name: standing.app.name, standing };
}

function operationAction(
  standing: OpenApiAppStanding,
  callable: OperationStanding,
): DirectoryAction {
  const { descriptor } = callable;
  return {
    kind: 'openapi',
    id: `${standing.app.id}.${descriptor.name}`,
    app: standing.app.id,
    name: descriptor.name,
    scope: callable.grade,
    description:
      descriptor.summary ?? descriptor.description ?? `${descriptor.method} ${descriptor.path}`,
    standing,
    callable,
  };
}

/** An operation of an OpenAPI app already read. */
export function operationActionOf(
  standing: OpenApiAppStanding,
  name: string,
): DirectoryAction | null {
  const callable = operationStanding(standing, name);
  return callable ? operationAction(standing, callable) : null;
}

/** The operations an OpenAPI app's callers can use now, by name. */
export function callableOperationActions(standing: OpenApiAppStanding): DirectoryAction[] {
  return callableOperations(standing).map((callable) => operationAction(standing, callable));
}

function catalogAction(action: ActionDefinition): DirectoryAction {
  return {
    kind: 'catalog',
    id: `${action.app}.${action.name}`,
    app: action.app,
    name: action.name,
    scope: action.scope,
    description: action.description,
    action,
  };
}

function toolAction(standing: McpAppStanding, callable: ToolStanding): DirectoryAction {
  const { tool } = callable;
  return {
    kind: 'mcp',
    id: `${standing.app.id}.${tool.name}`,
    app: standing.app.id,
    name: tool.name,
    scope: callable.grade,
    description: tool.description ?? tool.title ?? tool.name,
    tool,
    standing,
    callable,
  };
}

export async function findEnvironmentApp(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<DirectoryApp | null> {
  const app = findApp(id);
  if (app) return catalogEntry(app);
  if (!MCP_APP_ID.test(id)) return null;
  const standing = await findMcpAppStanding(sql, environmentId, id);
  if (standing) return mcpEntry(standing);
  const openApi = await findOpenApiAppStanding(sql, environmentId, id);
  return openApi ? openApiEntry(openApi) : null;
}

/**
 * The app a setting names (a connect link, an MCP OAuth client), without its snapshots: the
 * same answer as findEnvironmentApp for a fraction of the reading.
 */
export async function findEnvironmentAppRecord(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<{ kind: 'catalog'; app: AppDefinition } | { kind: 'mcp'; app: McpApp } | null> {
  const app = findApp(id);
  if (app) return { kind: 'catalog', app };
  if (!MCP_APP_ID.test(id)) return null;
  const registered = await findMcpApp(sql, environmentId, id);
  return registered ? { kind: 'mcp', app: registered } : null;
}

/** The catalog's apps in catalog order, then the environment's MCP apps by id. */
export async function listEnvironmentApps(sql: Db, environmentId: string): Promise<DirectoryApp[]> {
  const [standings, openApi] = await Promise.all([
    listMcpAppStandings(sql, environmentId),
    listOpenApiAppStandings(sql, environmentId),
  ]);
  return [
    ...listApps().map(catalogEntry),
    ...standings.map(mcpEntry),
    ...openApi.map(openApiEntry),
  ];
}

/**
 * An action by its full name. An MCP tool is found when the accepted snapshot or the newest
 * listing has it, callable or not: a call to a tool that is not callable is refused by the
 * pinning rule with its reason (denied_by_policy), not as unknown.
 */
export async function findEnvironmentAction(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<DirectoryAction | null> {
  const action = findAction(id);
  if (action) return catalogAction(action);
  const dot = id.indexOf('.');
  if (dot < 0) return null;
  const appId = id.slice(0, dot);
  if (!MCP_APP_ID.test(appId) || findApp(appId)) return null;
  const standing = await findMcpAppStanding(sql, environmentId, appId);
  if (standing) return toolActionOf(standing, id.slice(dot + 1));
  const operation = id.slice(dot + 1);
  const openApi = await findOpenApiOperationStanding(sql, environmentId, appId, operation);
  return openApi ? operationActionOf(openApi, operation) : null;
}

/** A tool of an app already read (a session's listing reads them all at once). */
export function toolActionOf(standing: McpAppStanding, name: string): DirectoryAction | null {
  const callable = toolStanding(standing, name);
  return callable ? toolAction(standing, callable) : null;
}

/** The tools an app's callers can use now: the accepted snapshot's, callable, in its order. */
export function callableTools(standing: McpAppStanding): DirectoryAction[] {
  return (standing.accepted?.tools ?? []).flatMap((tool) => {
    const callable = toolStanding(standing, tool.name);
    return callable?.callable ? [toolAction(standing, callable)] : [];
  });
}

/**
 * The actions callers can run, in catalog order, then each MCP app's callable tools; of one
 * app when `app` is given (an unknown app lists none, as for the catalog).
 */
export async function listEnvironmentActions(
  sql: Db,
  environmentId: string,
  app?: string,
): Promise<DirectoryAction[]> {
  const catalog = listActions(app).map(catalogAction);
  if (app !== undefined) {
    if (findApp(app) || !MCP_APP_ID.test(app)) return catalog;
    const standing = await findMcpAppStanding(sql, environmentId, app);
    if (standing) return callableTools(standing);
    const openApi = await findOpenApiAppStanding(sql, environmentId, app);
    return openApi ? callableOperationActions(openApi) : [];
  }
  const [standings, openApi] = await Promise.all([
    listMcpAppStandings(sql, environmentId),
    listOpenApiAppStandings(sql, environmentId),
  ]);
  return [
    ...catalog,
    ...standings.flatMap(callableTools),
    ...openApi.flatMap(callableOperationActions),
  ];
}
