/**
 * Remote MCP servers registered as apps of an environment: register, refresh, accept
 * a snapshot, change settings, delete. Each change is written with its audit event in one
 * transaction (registry-audit.ts). Shared by the management API and the command line.
 */
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { findApp, type CallScope } from '../../workflows/catalog/index.js';
import {
  gradeOf,
  type GradeSource,
  type McpToolDefinition,
} from '../../workflows/catalog/mcp-tools.js';
import {
  changesInWords,
  hasChanges,
  toolChanges,
  type ToolChanges,
} from '../../workflows/catalog/mcp-tool-changes.js';
import type { AccessTokenResult } from '../connections/access-token.js';
import {
  acceptSnapshot,
  deleteMcpApp,
  findMcpApp,
  findSnapshot,
  insertMcpApp,
  recordSnapshot,
  updateMcpApp,
  type McpApp,
  type McpAppChanges,
  type McpAppStanding,
} from '../db/mcp-apps.js';
import { openApiAppExists } from '../db/openapi-apps.js';
import { recordRegistryEvent, type RegistryActor } from './registry-audit.js';
import { listingConnection } from './listing-connection.js';
import { serverUrlProblem } from './server-url.js';
import { ListingError, listServerTools, type ListingFailureKind } from './tool-listing.js';

export interface RegistryDeps {
  sql: Sql;
  config: Pick<Config, 'mcpApps' | 'upstream'>;
  /**
   * A valid access token of a connection (validAccessToken, which may refresh it through its
   * workflow): how a server that asks for authorization is listed. Absent where no Temporal
   * client is at hand (the command line): such an app is refreshed through the API.
   */
  accessToken?: (connectionId: string) => Promise<AccessTokenResult>;
}

export type RegistryErrorKind =
  /** The id names a catalog app. */
  | 'catalog_id'
  /** The environment has an app with this id already. */
  | 'id_taken'
  | 'server_url'
  | 'not_found'
  | 'no_such_version'
  /** An app that asks for authorization has no active connection to list its tools with. */
  | 'no_connection'
  /** Listing needs a user's token, and this process cannot refresh one. */
  | 'needs_api'
  /** A server registered as asking for none now asks for authorization. */
  | 'now_protected'
  | 'listing';

export class RegistryError extends Error {
  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
    /** With `listing`: how the server failed. */
    readonly listing?: ListingFailureKind,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

export interface Registration {
  id: string;
  name: string;
  serverUrl: string;
  toolAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  /**
   * The operator trusts the server's own annotations to grade its tools: the first snapshot is
   * accepted by the registration even where they make a tool a read or a write.
   */
  trustAnnotations: boolean;
}

/**
 * The tools an agent could call whose grade only the server's annotations give, as `name
 * (grade)`: what an operator must have seen before the server's word counts.
 */
export function gradedByHints(
  tools: readonly McpToolDefinition[],
  settings: Pick<Registration, 'toolAllowlist' | 'gradeOverrides'>,
): string[] {
  return tools
    .filter((tool) => settings.toolAllowlist === null || settings.toolAllowlist.includes(tool.name))
    .map((tool) => ({ name: tool.name, ...gradeOf(tool, settings.gradeOverrides) }))
    .filter((graded) => graded.source === 'annotations')
    .map((graded) => `${graded.name} (${graded.grade})`);
}

/** Each tool's grade and where it came from, as an acceptance records what was accepted. */
function gradesOf(
  tools: readonly McpToolDefinition[],
  overrides: Readonly<Record<string, CallScope>>,
): Record<string, { grade: CallScope; source: GradeSource }> {
  return Object.fromEntries(tools.map((tool) => [tool.name, gradeOf(tool, overrides)]));
}

function listingFailed(error: unknown, serverUrl: string): never {
  if (error instanceof ListingError) {
    throw new RegistryError(
      'listing',
      `The MCP server at ${serverUrl} ${error.message}.`,
      error.kind,
    );
  }
  throw error;
}

/**
 * Registers a server: discovery and `tools/list` first, so nothing is stored for a URL that is
 * not an MCP server. A server that answers without authorization is `auth: "none"`, and the
 * tools it listed are snapshot v1. The registration accepts it (the operator chose the server by
 * registering it) unless the server's own annotations would grade a callable tool as a read or a
 * write: a destructive tool may claim `readOnlyHint`, so hints decide nothing until an operator
 * has seen the grades they give and accepted the snapshot, or registered the app trusting them.
 * One that answers 401 with protected resource metadata is `auth: "oauth"`: no snapshot until a
 * user connects and the app is refreshed; that first snapshot then needs an operator's
 * acceptance like any later one.
 */
export async function registerMcpApp(
  deps: RegistryDeps,
  actor: RegistryActor,
  input: Registration,
): Promise<McpAppStanding> {
  if (findApp(input.id)) {
    throw new RegistryError(
      'catalog_id',
      `"${input.id}" is a catalog app's id; choose another id for the MCP server.`,
    );
  }
  const problem = await serverUrlProblem(input.serverUrl, deps.config.mcpApps.allowPrivate);
  if (problem) throw new RegistryError('server_url', problem);
  // Checked before the server is contacted; the insert settles a race between two registrations.
  if (
    (await findMcpApp(deps.sql, actor.environmentId, input.id)) ||
    (await openApiAppExists(deps.sql, actor.environmentId, input.id))
  ) {
    throw new RegistryError('id_taken', `The environment already has an app "${input.id}".`);
  }
  const listing = await listServerTools(input.serverUrl, {
    allowPrivate: deps.config.mcpApps.allowPrivate,
    timeoutMs: deps.config.upstream.timeoutMs,
  }).catch((error: unknown) => listingFailed(error, input.serverUrl));
  const tools = listing.kind === 'tools' ? listing.tools : null;
  const hinted = tools === null ? [] : gradedByHints(tools, input);
  const acceptFirst = tools !== null && (input.trustAnnotations || hinted.length === 0);
  const registered = await deps.sql.begin(async (tx) => {
    const created = await insertMcpApp(
      tx,
      {
        ...input,
        environmentId: actor.environmentId,
        auth: listing.kind === 'tools' ? 'none' : 'oauth',
        updatedBy: actor.agentId,
        protocolVersion: listing.kind === 'tools' ? listing.protocolVersion : null,
      },
      tools,
      acceptFirst,
    );
    if (!created) return null;
    await recordRegistryEvent(tx, actor, {
      app: input.id,
      operation: 'register',
      decision: 'allowed',
      reason: registrationReason(input, tools, hinted),
      request: {
        id: input.id,
        name: input.name,
        server_url: input.serverUrl,
        tool_allowlist: input.toolAllowlist,
        grade_overrides: input.gradeOverrides,
        trust_annotations: input.trustAnnotations,
      },
      response: {
        auth: created.app.auth,
        accepted_version: created.app.acceptedVersion,
        tools: (tools ?? []).map((tool) => tool.name),
        grades: gradesOf(tools ?? [], input.gradeOverrides),
        ...(listing.kind === 'oauth'
          ? { authorization_servers: listing.authorizationServers }
          : {}),
      },
    });
    return created;
  });
  if (!registered) {
    throw new RegistryError('id_taken', `The environment already has an app "${input.id}".`);
  }
  return registered;
}

function registrationReason(
  input: Registration,
  tools: McpToolDefinition[] | null,
  hinted: readonly string[],
): string {
  const registered = `registered MCP server ${input.serverUrl}`;
  if (tools === null) {
    return `${registered} (asks for authorization): no tools until a user connects and an operator accepts the first snapshot`;
  }
  const count = `${String(tools.length)} tools`;
  if (hinted.length === 0) {
    return `${registered}; snapshot v1 (${count}) accepted by the registration: no grade comes from the server's annotations`;
  }
  if (input.trustAnnotations) {
    return `${registered}; snapshot v1 (${count}) accepted by the registration, trusting the server's annotations: ${hinted.join(', ')}`;
  }
  return `${registered}; snapshot v1 (${count}) waits for an operator's acceptance: the server's own annotations grade ${hinted.join(', ')}`;
}

async function appOrNotFound(
  deps: RegistryDeps,
  actor: RegistryActor,
  id: string,
): Promise<McpApp> {
  const app = await findMcpApp(deps.sql, actor.environmentId, id);
  if (!app) throw new RegistryError('not_found', `MCP app "${id}"`);
  return app;
}

/** A user's token to list an OAuth server's tools with: its most recently used connection's. */
async function listingToken(deps: RegistryDeps, app: McpApp): Promise<string> {
  if (!deps.accessToken) {
    throw new RegistryError(
      'needs_api',
      `App "${app.id}" asks for authorization: refresh it through the API (POST /v1/mcp-apps/${app.id}/refresh), which can refresh a user's token.`,
    );
  }
  const connectionId = await listingConnection(deps.sql, app);
  const token = connectionId === null ? null : await deps.accessToken(connectionId);
  if (!token?.ok) {
    throw new RegistryError(
      'no_connection',
      `App "${app.id}" asks for authorization and no user has an active connection to it: connect a user (POST /v1/connect/links), then refresh.`,
    );
  }
  return token.accessToken;
}

export interface Refreshed {
  standing: McpAppStanding;
  /** Whether the listing made a new snapshot version. */
  created: boolean;
  /** The newest snapshot against the accepted one (every tool is added when none is). */
  changes: ToolChanges;
}

/**
 * Lists the server's tools again and keeps them as a new snapshot when they differ from the
 * newest. A new snapshot that differs from the accepted one is pending (its changed tools are
 * refused until an operator accepts it), and recorded in the audit log with what changed.
 */
export async function refreshMcpApp(
  deps: RegistryDeps,
  actor: RegistryActor,
  id: string,
): Promise<Refreshed> {
  const app = await appOrNotFound(deps, actor, id);
  const accessToken = app.auth === 'oauth' ? await listingToken(deps, app) : undefined;
  const listing = await listServerTools(app.serverUrl, {
    allowPrivate: deps.config.mcpApps.allowPrivate,
    timeoutMs: deps.config.upstream.timeoutMs,
    ...(accessToken === undefined ? {} : { accessToken }),
  }).catch((error: unknown) => listingFailed(error, app.serverUrl));
  if (listing.kind === 'oauth') {
    throw new RegistryError(
      'now_protected',
      `The MCP server of app "${id}" now asks for authorization; it was registered as asking for none. Delete the app and register it again so that users can connect.`,
    );
  }
  const refreshed = await deps.sql.begin(async (tx) => {
    const recorded = await recordSnapshot(tx, app, listing, actor.agentId);
    if (!recorded) return null;
    const changes = toolChanges(recorded.accepted?.tools ?? null, recorded.latest.tools);
    if (recorded.created && hasChanges(changes)) {
      const version = recorded.latest.version;
      await recordRegistryEvent(tx, actor, {
        app: id,
        operation: 'refresh',
        decision: 'blocked',
        reason: `snapshot v${String(version)} differs from the accepted ${recorded.accepted ? `snapshot v${String(recorded.accepted.version)}` : 'none'} and is pending an operator's acceptance: ${changesInWords(changes)}`,
        request: { id },
        response: {
          version,
          accepted_version: recorded.app.acceptedVersion,
          changes,
        },
      });
    }
    return { standing: recorded, created: recorded.created, changes };
  });
  if (!refreshed) throw new RegistryError('not_found', `MCP app "${id}"`);
  return refreshed;
}

/** Makes `version` the snapshot calls use: the operator's act that ends the pinning refusals. */
export async function acceptMcpAppSnapshot(
  deps: RegistryDeps,
  actor: RegistryActor,
  id: string,
  version: number,
): Promise<McpAppStanding> {
  return deps.sql.begin(async (tx) => {
    const result = await acceptSnapshot(
      tx,
      { environmentId: actor.environmentId, id },
      version,
      actor.agentId,
    );
    if (result.outcome === 'not_found') throw new RegistryError('not_found', `MCP app "${id}"`);
    if (result.outcome === 'no_such_version') {
      throw new RegistryError('no_such_version', `Snapshot v${String(version)} of MCP app "${id}"`);
    }
    const { standing, previous } = result;
    if (previous !== version) {
      const app = { environmentId: actor.environmentId, id };
      const before = previous === null ? null : await findSnapshot(tx, app, previous);
      const changes = toolChanges(before?.tools ?? null, standing.accepted?.tools ?? []);
      await recordRegistryEvent(tx, actor, {
        app: id,
        operation: 'accept',
        decision: 'allowed',
        reason: `snapshot v${String(version)} accepted (was ${previous === null ? 'none' : `v${String(previous)}`}): ${changesInWords(changes)}`,
        request: { id, version },
        response: {
          accepted_version: version,
          previous_version: previous,
          changes,
          // What the operator accepted each grade as, and on whose word.
          grades: gradesOf(standing.accepted?.tools ?? [], standing.app.gradeOverrides),
        },
      });
    }
    return standing;
  });
}

/** Name, allow-list and grade overrides; the server URL is the app's identity and stays. */
export async function updateMcpAppSettings(
  deps: RegistryDeps,
  actor: RegistryActor,
  id: string,
  changes: McpAppChanges,
): Promise<McpApp> {
  return deps.sql.begin(async (tx) => {
    const updated = await updateMcpApp(
      tx,
      { environmentId: actor.environmentId, id },
      changes,
      actor.agentId,
    );
    if (!updated) throw new RegistryError('not_found', `MCP app "${id}"`);
    const { before, after } = updated;
    await recordRegistryEvent(tx, actor, {
      app: id,
      operation: 'update',
      decision: 'allowed',
      reason: `settings changed: ${Object.keys(changes).join(', ') || 'nothing'}`,
      request: {
        id,
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.toolAllowlist === undefined ? {} : { tool_allowlist: changes.toolAllowlist }),
        ...(changes.gradeOverrides === undefined
          ? {}
          : { grade_overrides: changes.gradeOverrides }),
      },
      response: {
        before: {
          name: before.name,
          tool_allowlist: before.toolAllowlist,
          grade_overrides: before.gradeOverrides,
        },
        after: {
          name: after.name,
          tool_allowlist: after.toolAllowlist,
          grade_overrides: after.gradeOverrides,
        },
      },
    });
    return after;
  });
}

/** Deletes the app, its snapshots, and its users' connections (revoked here). */
export async function removeMcpApp(
  deps: RegistryDeps,
  actor: RegistryActor,
  id: string,
): Promise<{ app: McpApp; revokedConnections: number }> {
  return deps.sql.begin(async (tx) => {
    const removed = await deleteMcpApp(tx, { environmentId: actor.environmentId, id });
    if (!removed) throw new RegistryError('not_found', `MCP app "${id}"`);
    await recordRegistryEvent(tx, actor, {
      app: id,
      operation: 'delete',
      decision: 'allowed',
      reason: `deleted MCP app (server ${removed.app.serverUrl}); ${String(removed.revokedConnections)} connections revoked`,
      request: { id },
      response: {
        server_url: removed.app.serverUrl,
        revoked_connections: removed.revokedConnections,
      },
    });
    return removed;
  });
}
