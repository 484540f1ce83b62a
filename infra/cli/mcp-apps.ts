import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { findEnvironmentByName } from '../../activities/db/environments.js';
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
  RegistryError,
  removeMcpApp,
  updateMcpAppSettings,
  type RegistryDeps,
} from '../../activities/mcp-apps/registry.js';
import { presentMcpApp, type McpAppView } from '../../api/presenters/mcp-apps.js';
import {
  acceptMcpAppBody,
  registerMcpAppBody,
  updateMcpAppBody,
} from '../../api/mcp-apps/inputs.js';
import { changesInWords } from '../../workflows/catalog/mcp-tool-changes.js';
import { loadConfig, type Config } from '../config.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';
import { listOutput } from './table.js';

export type McpAppSettings = Pick<Config, 'mcpApps' | 'upstream'>;

/**
 * The address rule and time bound of the API: from the environment as the API reads them, or,
 * for the local stack of `gatehouse dev` (no DATABASE_URL), its acceptance of local servers.
 */
export async function mcpAppSettings(): Promise<McpAppSettings> {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const config = loadConfig({
    ...(local ? { MCP_APPS_ALLOW_PRIVATE: 'true' } : {}),
    // Nothing is sealed or opened here: a stand-in key lets the command run without the secret.
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://local',
  });
  return { mcpApps: config.mcpApps, upstream: config.upstream };
}

export interface McpAppCommandOptions {
  env: string;
  json?: boolean;
}

/** Who acts from the command line: `cli`, as the webhook commands record it. */
async function actorIn(sql: Sql, env: string): Promise<RegistryActor> {
  const environment = await findEnvironmentByName(sql, env);
  if (!environment) throw new Error(`no environment "${env}"`);
  return {
    environmentId: environment.id,
    agentId: 'cli',
    channel: 'cli',
    traceId: `cli-${uuidv7()}`,
  };
}

/** The registry's refusals and the API's validation, in the command line's words. */
function failed(error: unknown): never {
  if (error instanceof RegistryError) throw new Error(error.message);
  throw error;
}

/** The API's own validation, its issues named as flags (`--url …`). */
function parsed<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const flag = (path: PropertyKey[]) => {
    const field = String(path[0] ?? 'input');
    const named: Record<string, string> = {
      id: '<app>',
      server_url: '--url',
      tool_allowlist: '--allow',
      grade_overrides: '--grade',
    };
    return named[field] ?? `--${field}`;
  };
  throw new Error(
    result.error.issues.map((issue) => `${flag(issue.path)}: ${issue.message}`).join('; '),
  );
}

/** `echo,get-sum` → ['echo', 'get-sum']. */
export function parseToolList(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

/** `echo=read,send=destructive` → {echo: 'read', send: 'destructive'}. */
export function parseGrades(value: string): Record<string, string> {
  const grades = new Map<string, string>();
  for (const pair of parseToolList(value)) {
    const at = pair.lastIndexOf('=');
    if (at <= 0) {
      throw new Error(`--grade "${pair}": write tool=read, tool=write or tool=destructive`);
    }
    const tool = pair.slice(0, at);
    // An object would take it as its prototype, and the grade would vanish unseen.
    if (tool === '__proto__')
      throw new Error('--grade: "__proto__" cannot be stored as a tool name');
    grades.set(tool, pair.slice(at + 1));
  }
  return Object.fromEntries(grades);
}

function describe(view: McpAppView, json: boolean | undefined): string {
  if (json) return JSON.stringify(view, null, 2);
  const { snapshot } = view;
  const state = [
    snapshot.accepted_version === null
      ? 'none accepted'
      : `accepted v${String(snapshot.accepted_version)}`,
    snapshot.latest_version === null
      ? 'none listed yet'
      : `latest v${String(snapshot.latest_version)}`,
    snapshot.checked_at ? `checked ${snapshot.checked_at}` : 'never listed',
  ].join(', ');
  const pending = snapshot.pending
    ? `v${String(snapshot.pending.version)} (${changesInWords(snapshot.pending.changes)}): gatehouse apps accept ${view.app} --version ${String(snapshot.pending.version)} --env …`
    : 'nothing';
  const tools = listOutput(
    view.tools,
    [
      ['TOOL', (tool) => tool.name],
      ['GRADE', (tool) => `${tool.grade} (${GRADE_SOURCE_WORDS[tool.grade_source]})`],
      ['CALLABLE', (tool) => (tool.callable ? 'yes' : 'no')],
      ['WHY NOT', (tool) => tool.refused_because ?? ''],
    ],
    {
      empty:
        '(no tools yet: a server that asks for authorization lists them once a user connected and the app is refreshed)',
    },
  );
  return [
    `app          ${view.app}`,
    `name         ${view.name}`,
    `server URL   ${view.server_url}`,
    `auth         ${view.auth === 'none' ? 'none: every user may call its tools' : 'oauth: users connect through a connect link'}`,
    `protocol     ${view.protocol_version === null ? 'not listed yet' : `MCP ${view.protocol_version} (negotiated at the last listing)`}`,
    `snapshots    ${state}`,
    `pending      ${pending}`,
    `allow-list   ${view.tool_allowlist === null ? 'every tool' : view.tool_allowlist.join(', ')}`,
    '',
    tools,
  ].join('\n');
}

const GRADE_SOURCE_WORDS: Record<McpAppView['tools'][number]['grade_source'], string> = {
  override: 'override',
  annotations: "server's annotations",
  default: 'no hints',
};

export async function registerMcpAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: McpAppCommandOptions & {
    url: string;
    name?: string;
    allow?: string;
    grade?: string;
    trustAnnotations?: boolean;
  },
): Promise<string> {
  const body = parsed(registerMcpAppBody, {
    id,
    name: options.name ?? id,
    server_url: options.url,
    ...(options.allow === undefined ? {} : { tool_allowlist: parseToolList(options.allow) }),
    ...(options.grade === undefined ? {} : { grade_overrides: parseGrades(options.grade) }),
    ...(options.trustAnnotations === true ? { trust_annotations: true } : {}),
  });
  const deps: RegistryDeps = { sql, config: settings };
  const standing = await registerMcpApp(deps, await actorIn(sql, options.env), {
    id: body.id,
    name: body.name,
    serverUrl: body.server_url,
    toolAllowlist: body.tool_allowlist ?? null,
    gradeOverrides: body.grade_overrides ?? {},
    trustAnnotations: body.trust_annotations ?? false,
  }).catch(failed);
  return describe(presentMcpApp(standing), options.json);
}

export async function refreshMcpAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: McpAppCommandOptions,
): Promise<string> {
  const refreshed = await refreshMcpApp(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
  ).catch(failed);
  return describe(presentMcpApp(refreshed.standing), options.json);
}

export async function acceptMcpAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: McpAppCommandOptions & { version: string },
): Promise<string> {
  const { version } = parsed(acceptMcpAppBody, { version: Number(options.version) });
  const standing = await acceptMcpAppSnapshot(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
    version,
  ).catch(failed);
  return describe(presentMcpApp(standing), options.json);
}

export async function updateMcpAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: McpAppCommandOptions & {
    name?: string;
    allow?: string;
    allowAll?: boolean;
    grade?: string;
  },
): Promise<string> {
  if (options.allow !== undefined && options.allowAll)
    throw new Error('give --allow or --allow-all, not both');
  const body = parsed(updateMcpAppBody, {
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.allowAll ? { tool_allowlist: null } : {}),
    ...(options.allow === undefined ? {} : { tool_allowlist: parseToolList(options.allow) }),
    ...(options.grade === undefined ? {} : { grade_overrides: parseGrades(options.grade) }),
  });
  const actor = await actorIn(sql, options.env);
  await updateMcpAppSettings({ sql, config: settings }, actor, id, {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.tool_allowlist === undefined ? {} : { toolAllowlist: body.tool_allowlist }),
    ...(body.grade_overrides === undefined ? {} : { gradeOverrides: body.grade_overrides }),
  }).catch(failed);
  return showMcpAppCommand(sql, id, options);
}

export async function removeMcpAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: McpAppCommandOptions,
): Promise<string> {
  const removed = await removeMcpApp(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
  ).catch(failed);
  return `app ${removed.app.id} deleted; ${String(removed.revokedConnections)} connections revoked`;
}

export async function showMcpAppCommand(
  sql: Sql,
  id: string,
  options: McpAppCommandOptions,
): Promise<string> {
  const actor = await actorIn(sql, options.env);
  const standing = await findMcpAppStanding(sql, actor.environmentId, id);
  if (!standing) throw new Error(`no app "${id}" in environment "${options.env}"`);
  return describe(presentMcpApp(standing), options.json);
}

/** The environment's remote MCP apps, for `apps list --env` below the catalog. */
export async function listMcpAppStandingsIn(sql: Sql, env: string): Promise<McpAppStanding[]> {
  const actor = await actorIn(sql, env);
  return listMcpAppStandings(sql, actor.environmentId);
}
