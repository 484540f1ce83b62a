import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
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

/** `acme.create_task` for `acme__create_task`, as audit names a call; the name itself otherwise. */
export function actionNameOf(tool: string): string {
  const at = tool.indexOf(SEPARATOR);
  return at < 0 ? tool : `${tool.slice(0, at)}.${tool.slice(at + SEPARATOR.length)}`;
}

/** The action a tool name stands for, if the principal's session lets it be called at all. */
export function sessionAction(principal: McpPrincipal, tool: string): ActionDefinition | null {
  const action = findAction(actionNameOf(tool));
  if (!action || toolName(action) !== tool) return null;
  return inSession(principal, action) ? action : null;
}

function inSession(principal: McpPrincipal, action: ActionDefinition): boolean {
  return (
    (principal.apps === null || principal.apps.includes(action.app)) &&
    (principal.actions === null || principal.actions.includes(`${action.app}.${action.name}`))
  );
}

/** A tool as the principal may use it now. */
export interface ToolEntry {
  action: ActionDefinition;
  /** Whether the user has connected the app; false only for sessions that list all apps. */
  connected: boolean;
  /** What the governing policy does with a call, before any approval: never `deny`. */
  decision: Exclude<Decision, 'deny'>;
}

/**
 * Every tool the principal can use, in catalog order: the session's apps and actions, of apps
 * the user has connected (or all, when the session asks for connect prompts), without the
 * actions the policy governing the agent denies outright.
 */
export async function availableTools(sql: Sql, principal: McpPrincipal): Promise<ToolEntry[]> {
  const { environmentId, agentId } = principal.caller;
  const [connected, policies] = await Promise.all([
    connectedAppsOf(sql, environmentId, principal.userExternalId),
    listPolicies(sql, environmentId),
  ]);
  const policy = governingPolicy(policies, agentId);
  return listActions().flatMap((action): ToolEntry[] => {
    if (!inSession(principal, action)) return [];
    const isConnected = connected.has(action.app);
    if (!isConnected && !principal.includeUnconnectedApps) return [];
    // Each environment is seeded with a `*` policy; without one nothing runs (prepare-call.ts).
    const decision = policy
      ? evaluatePolicy(policy, {
          kind: 'action',
          action: `${action.app}.${action.name}`,
          app: action.app,
          scope: action.scope,
        }).decision
      : 'deny';
    return decision === 'deny' ? [] : [{ action, connected: isConnected, decision }];
  });
}

const schemas = new Map<ActionDefinition, Record<string, unknown>>();

/** The same JSON Schema `GET /v1/actions/{action}` publishes, made once per action. */
function inputSchemaOf(action: ActionDefinition): Tool['inputSchema'] {
  let schema = schemas.get(action);
  if (!schema) {
    schema = inputJsonSchema(action);
    schemas.set(action, schema);
  }
  // Every catalog input is an object (defineAction's schemas are strict objects).
  return { ...schema, type: 'object' };
}

function titleOf(action: ActionDefinition): string {
  const words = action.name.replace(/_/g, ' ');
  return `${findApp(action.app)?.name ?? action.app}: ${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

function descriptionOf(entry: ToolEntry): string {
  const { action } = entry;
  const app = findApp(action.app)?.name ?? action.app;
  const notes = [action.description];
  if (entry.decision === 'ask') {
    notes.push(
      'Held for a person’s approval before it runs: the call answers at once with an approval ' +
        'id and nothing is sent yet; call again with the same arguments once it is approved, ' +
        'and it runs once.',
    );
  }
  if (!entry.connected) {
    notes.push(`The user has not connected ${app} yet: calling this offers a connect link.`);
  }
  return notes.join(' ');
}

/** MCP's hints from the catalog's grading: reads change nothing, destructive calls may lose data. */
export function toolOf(entry: ToolEntry): Tool {
  const { action } = entry;
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
      idempotentHint: action.scope === 'read',
      // Every tool reaches a third-party app.
      openWorldHint: true,
    },
  };
}

/** The cursor is the last tool of the page before: tools are always listed in catalog order. */
function cursorOf(tool: string): string {
  return Buffer.from(JSON.stringify({ after: tool }), 'utf8').toString('base64url');
}

function afterOf(cursor: string): number {
  let after: unknown;
  try {
    after = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown })
      .after;
  } catch {
    after = undefined;
  }
  const action = typeof after === 'string' ? findAction(actionNameOf(after)) : undefined;
  // MCP pagination: an invalid cursor is a protocol error (-32602).
  if (!action) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor.');
  return listActions().indexOf(action);
}

/**
 * One page of tools (MCP pagination). A page resumes after the catalog position of the last tool
 * the previous page gave, so a tool appearing or vanishing between pages moves no other tool.
 */
export function toolPage(
  tools: readonly ToolEntry[],
  cursor: string | undefined,
  pageSize: number,
): { tools: Tool[]; nextCursor?: string } {
  const catalog = listActions();
  const after = cursor === undefined ? -1 : afterOf(cursor);
  const rest = tools.filter((entry) => catalog.indexOf(entry.action) > after);
  const page = rest.slice(0, pageSize);
  const last = page.at(-1);
  return {
    tools: page.map(toolOf),
    ...(rest.length > pageSize && last ? { nextCursor: cursorOf(toolName(last.action)) } : {}),
  };
}
