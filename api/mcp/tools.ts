import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  callableOperationActions,
  callableTools,
  findEnvironmentAction,
  MCP_APP_ID,
  type DirectoryAction,
} from '../../activities/apps/directory.js';
import { listMcpAppStandings } from '../../activities/db/mcp-apps.js';
import { listOpenApiAppStandings } from '../../activities/db/openapi-apps.js';
import { connectedAppsOf } from '../../activities/db/mcp-sessions.js';
import { listPolicies } from '../../activities/db/policies.js';
import type { Sql } from '../../infra/database/client.js';
import {
  findAction,
  findApp,
  listActions,
  type ActionDefinition,
} from '../../workflows/catalog/index.js';
import { evaluatePolicy, governingPolicy, type Decision } from '../../workflows/policy.js';
import { inputJsonSchema } from '../calls/action-input.js';
import type { McpPrincipal } from './principal.js';

/**
 * `<app>__<action>`: clients accept only `[A-Za-z0-9_-]` in tool names (some refuse the dots of
 * `acme.create_task`), and no app id or action name holds two underscores in a row.
 */
const SEPARATOR = '__';

export function toolName(action: Pick<ActionDefinition, 'app' | 'name'>): string {
  return `${action.app}${SEPARATOR}${action.name}`;
}

/**
 * What MCP clients accept as a tool name. A remote MCP tool may be named with a dot (MCP allows
 * it), which `<app>__<tool>` would carry into a name some clients refuse: such a tool is left out
 * of this server's list (it stays callable through `POST /v1/actions/{action}/run`).
 */
const CLIENT_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** `acme.create_task` for `acme__create_task`, as audit names a call; the name itself otherwise. */
export function actionNameOf(tool: string): string {
  const at = tool.indexOf(SEPARATOR);
  return at < 0 ? tool : `${tool.slice(0, at)}.${tool.slice(at + SEPARATOR.length)}`;
}

/**
 * The action a tool name stands for, if the principal's session lets it be called at all: a
 * catalog action, or a tool of a remote MCP app of the environment (callable or not: the call
 * of a tool the pinning rule refuses is denied with its reason, as over REST).
 */
export async function sessionAction(
  sql: Sql,
  principal: McpPrincipal,
  tool: string,
): Promise<DirectoryAction | null> {
  const action = await findEnvironmentAction(
    sql,
    principal.caller.environmentId,
    actionNameOf(tool),
  );
  if (!action || toolName(action) !== tool || !CLIENT_TOOL_NAME.test(tool)) return null;
  return inSession(principal, action) ? action : null;
}

function inSession(principal: McpPrincipal, action: Pick<DirectoryAction, 'app' | 'id'>): boolean {
  return (
    (principal.apps === null || principal.apps.includes(action.app)) &&
    (principal.actions === null || principal.actions.includes(action.id))
  );
}

/** A tool as the principal may use it now. */
export interface ToolEntry {
  action: DirectoryAction;
  /** Whether the user has connected the app; false only for sessions that list all apps. */
  connected: boolean;
  /**
   * What the governing policy does with a call, before any approval: never a sure `deny`.
   * `depends`: rule conditions decide on each call's arguments.
   */
  decision: Exclude<Decision, 'deny'> | 'depends';
}

/** Catalog actions first, then remote MCP tools by app id and tool name (see toolPage). */
async function environmentActions(
  sql: Sql,
  environmentId: string,
): Promise<{ action: DirectoryAction; needsConnection: boolean }[]> {
  const [standings, openApi] = await Promise.all([
    listMcpAppStandings(sql, environmentId),
    listOpenApiAppStandings(sql, environmentId),
  ]);
  const catalog = listActions().map((action) => ({
    action: {
      kind: 'catalog' as const,
      id: `${action.app}.${action.name}`,
      app: action.app,
      name: action.name,
      scope: action.scope,
      description: action.description,
      action,
    },
    needsConnection: true,
  }));
  const remote = standings.flatMap((standing) =>
    callableTools(standing)
      .filter((action) => CLIENT_TOOL_NAME.test(toolName(action)))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      // A server that asks for no authorization serves every user: nothing to connect.
      .map((action) => ({ action, needsConnection: standing.app.auth === 'oauth' })),
  );
  // An OpenAPI operation needs the user's connection when it needs a credential
  // (operation-standing.ts); one that takes it only if given is callable unconnected. Names are
  // in the action-name shape, which every MCP client takes.
  const imported = openApi.flatMap((standing) =>
    callableOperationActions(standing).map((action) => ({
      action,
      needsConnection:
        action.kind === 'openapi' &&
        action.callable.callable &&
        action.callable.credential === 'required',
    })),
  );
  return [...catalog, ...remote, ...imported];
}

/**
 * Every tool the principal can use, in order: the session's apps and actions, of apps the user
 * has connected (or all, when the session asks for connect prompts; a remote MCP app that asks
 * for no authorization counts as connected for every user), without the actions the policy
 * governing the agent denies outright, nor remote MCP tools the pinning rule refuses.
 */
export async function availableTools(sql: Sql, principal: McpPrincipal): Promise<ToolEntry[]> {
  const { environmentId, agentId } = principal.caller;
  const [connected, policies, actions] = await Promise.all([
    connectedAppsOf(sql, environmentId, principal.userExternalId),
    listPolicies(sql, environmentId),
    environmentActions(sql, environmentId),
  ]);
  const policy = governingPolicy(policies, agentId);
  return actions.flatMap(({ action, needsConnection }): ToolEntry[] => {
    if (!inSession(principal, action)) return [];
    const isConnected = !needsConnection || connected.has(action.app);
    if (!isConnected && !principal.includeUnconnectedApps) return [];
    // Each environment is seeded with a `*` policy; without one nothing runs (prepare-call.ts).
    // Before any call there is no input to judge conditions on: a tool is left out only where the
    // policy denies it whatever its conditions make of the call.
    const verdict = policy
      ? evaluatePolicy(policy, {
          kind: 'action',
          action: action.id,
          app: action.app,
          scope: action.scope,
        })
      : ({ decision: 'deny', certain: true } as const);
    if (verdict.decision === 'deny' && verdict.certain) return [];
    const decision = verdict.certain && verdict.decision !== 'deny' ? verdict.decision : 'depends';
    return [{ action, connected: isConnected, decision }];
  });
}

const schemas = new Map<ActionDefinition, Record<string, unknown>>();

/** The same JSON Schema `GET /v1/actions/{action}` publishes, made once per catalog action. */
function inputSchemaOf(action: DirectoryAction): Tool['inputSchema'] {
  if (action.kind === 'mcp') {
    // MCP requires an object schema of a tool's arguments; a snapshot keeps only such tools.
    return { ...action.tool.inputSchema, type: 'object' };
  }
  if (action.kind === 'openapi') {
    // The importer's grouped input schema is an object of `path`, `query`, `headers`, `body`.
    return { ...action.callable.descriptor.inputSchema, type: 'object' };
  }
  let schema = schemas.get(action.action);
  if (!schema) {
    schema = inputJsonSchema(action.action);
    schemas.set(action.action, schema);
  }
  // Every catalog input is an object (defineAction's schemas are strict objects).
  return { ...schema, type: 'object' };
}

/** The app's name, as people read it: the catalog's, or the name the operator registered. */
export function appNameOf(action: DirectoryAction): string {
  return action.kind === 'catalog'
    ? (findApp(action.app)?.name ?? action.app)
    : action.standing.app.name;
}

function titleOf(action: DirectoryAction): string {
  if (action.kind === 'mcp') {
    return `${appNameOf(action)}: ${action.tool.title ?? action.tool.annotations?.title ?? action.name}`;
  }
  const words = action.name.replace(/_/g, ' ');
  return `${appNameOf(action)}: ${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

function descriptionOf(entry: ToolEntry): string {
  const { action } = entry;
  const app = appNameOf(action);
  const notes = [action.description];
  if (entry.decision === 'ask') {
    notes.push(
      'Held for a person’s approval before it runs: the call answers at once with an approval ' +
        'id and nothing is sent yet; call again with the same arguments once it is approved, ' +
        'and it runs once.',
    );
  }
  if (entry.decision === 'depends') {
    notes.push(
      'Depending on its arguments, a call may run at once, be held for a person’s approval, or ' +
        'be refused.',
    );
  }
  if (!entry.connected) {
    notes.push(`The user has not connected ${app} yet: calling this offers a connect link.`);
  }
  return notes.join(' ');
}

/**
 * MCP's hints from the grade the call is governed at (reads change nothing, destructive calls may
 * lose data); a remote tool's own idempotent and open-world hints are passed on as it gave them.
 */
export function toolOf(entry: ToolEntry): Tool {
  const { action } = entry;
  const hints = action.kind === 'mcp' ? action.tool.annotations : undefined;
  return {
    name: toolName(action),
    title: titleOf(action),
    description: descriptionOf(entry),
    inputSchema: inputSchemaOf(action),
    annotations: {
      title: titleOf(action),
      readOnlyHint: action.scope === 'read',
      destructiveHint: action.scope === 'destructive',
      // Repeating a read changes nothing; a write's effect depends on the app (a second create
      // makes a second task), so none is promised.
      idempotentHint: hints?.idempotentHint ?? action.scope === 'read',
      // Every catalog tool reaches a third-party app.
      openWorldHint: hints?.openWorldHint ?? true,
    },
    // Any call may be held for a person's decision, whatever its grade (the policy decides, and
    // can change): a client that speaks MCP tasks may wait for it as a task; one that does not
    // gets the held result it always got.
    execution: { taskSupport: 'optional' },
  };
}

/** The cursor is the last tool of the page before: tools are always listed in one order. */
function cursorOf(tool: string): string {
  return Buffer.from(JSON.stringify({ after: tool }), 'utf8').toString('base64url');
}

/**
 * Where a tool sorts: catalog actions by catalog position, then remote MCP tools by app id and
 * tool name. Computed from the name alone, so a cursor still places a tool that has vanished
 * (an MCP app deleted, a tool refused since) between the same neighbours.
 */
type Position = [group: number, index: number, app: string, tool: string];

function positionOf(tool: string): Position | null {
  const id = actionNameOf(tool);
  const action = findAction(id);
  if (action && toolName(action) === tool) return [0, listActions().indexOf(action), '', ''];
  const dot = id.indexOf('.');
  const app = id.slice(0, dot);
  if (dot < 0 || findApp(app) || !MCP_APP_ID.test(app) || !CLIENT_TOOL_NAME.test(tool)) return null;
  return [1, 0, app, id.slice(dot + 1)];
}

function after(a: Position, b: Position): boolean {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i] ?? 0, b[i] ?? 0];
    if (x !== y) return x > y;
  }
  return false;
}

function afterOf(cursor: string): Position {
  let last: unknown;
  try {
    last = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown })
      .after;
  } catch {
    last = undefined;
  }
  const position = typeof last === 'string' ? positionOf(last) : null;
  // MCP pagination: an invalid cursor is a protocol error (-32602).
  if (!position) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor.');
  return position;
}

/**
 * One page of tools (MCP pagination). A page resumes after the position of the last tool the
 * previous page gave, so a tool appearing or vanishing between pages moves no other tool.
 */
export function toolPage(
  tools: readonly ToolEntry[],
  cursor: string | undefined,
  pageSize: number,
): { tools: Tool[]; nextCursor?: string } {
  const from = cursor === undefined ? null : afterOf(cursor);
  const rest = tools.filter((entry) => {
    const position = positionOf(toolName(entry.action));
    return from === null || (position !== null && after(position, from));
  });
  const page = rest.slice(0, pageSize);
  const last = page.at(-1);
  return {
    tools: page.map(toolOf),
    ...(rest.length > pageSize && last ? { nextCursor: cursorOf(toolName(last.action)) } : {}),
  };
}
