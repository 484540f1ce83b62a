import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';
import type { McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import type { CallScope } from '../../workflows/catalog/index.js';

/** A remote MCP server registered as an app of an environment. */
export interface McpApp {
  environmentId: string;
  id: string;
  name: string;
  /** The server's Streamable HTTP endpoint. */
  serverUrl: string;
  /** What discovery found: `oauth` when the server asks for authorization. */
  auth: 'none' | 'oauth';
  toolAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  acceptedVersion: number | null;
  /** When `tools/list` last answered (registration or refresh); null before it ever did. */
  toolsCheckedAt: Date | null;
  /** The MCP protocol revision the server negotiated at that listing; null before it. */
  protocolVersion: string | null;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

export interface McpAppSnapshot {
  environmentId: string;
  appId: string;
  version: number;
  tools: McpToolDefinition[];
  fetchedAt: Date;
  fetchedBy: string;
  acceptedAt: Date | null;
  acceptedBy: string | null;
}

const appColumns = (sql: Db) => sql`
  environment_id, id, name, server_url, auth, tool_allowlist, grade_overrides, accepted_version,
  tools_checked_at, protocol_version, created_at, updated_at, updated_by`;

const snapshotColumns = (sql: Db) => sql`
  environment_id, app_id, version, tools, fetched_at, fetched_by, accepted_at, accepted_by`;

export async function findMcpApp(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<McpApp | null> {
  const [row]: [McpApp?] = await sql`
    select ${appColumns(sql)} from mcp_apps where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

export async function listMcpApps(sql: Db, environmentId: string): Promise<McpApp[]> {
  return sql<McpApp[]>`
    select ${appColumns(sql)} from mcp_apps where environment_id = ${environmentId} order by id`;
}

/** The snapshot whose tools calls may use; null until one is accepted. */
export async function findAcceptedSnapshot(
  sql: Db,
  app: Pick<McpApp, 'environmentId' | 'id' | 'acceptedVersion'>,
): Promise<McpAppSnapshot | null> {
  if (app.acceptedVersion === null) return null;
  const [row]: [McpAppSnapshot?] = await sql`
    select ${snapshotColumns(sql)} from mcp_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id}
      and version = ${app.acceptedVersion}`;
  return row ?? null;
}

/** The newest snapshot (what the server served when last listed); null before any. */
export async function findLatestSnapshot(
  sql: Db,
  app: Pick<McpApp, 'environmentId' | 'id'>,
): Promise<McpAppSnapshot | null> {
  const [row]: [McpAppSnapshot?] = await sql`
    select ${snapshotColumns(sql)} from mcp_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id}
    order by version desc limit 1`;
  return row ?? null;
}

export async function findSnapshot(
  sql: Db,
  app: Pick<McpApp, 'environmentId' | 'id'>,
  version: number,
): Promise<McpAppSnapshot | null> {
  const [row]: [McpAppSnapshot?] = await sql`
    select ${snapshotColumns(sql)} from mcp_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id} and version = ${version}`;
  return row ?? null;
}

/** An app with the two snapshots its tools are judged by: the accepted one and the newest. */
export interface McpAppStanding {
  app: McpApp;
  accepted: McpAppSnapshot | null;
  latest: McpAppSnapshot | null;
}

export async function findMcpAppStanding(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<McpAppStanding | null> {
  const app = await findMcpApp(sql, environmentId, id);
  if (!app) return null;
  const [accepted, latest] = await Promise.all([
    findAcceptedSnapshot(sql, app),
    findLatestSnapshot(sql, app),
  ]);
  return { app, accepted, latest };
}

/** Every app of an environment with its snapshots, in id order. */
export async function listMcpAppStandings(
  sql: Db,
  environmentId: string,
): Promise<McpAppStanding[]> {
  const apps = await listMcpApps(sql, environmentId);
  if (apps.length === 0) return [];
  const snapshots = await sql<McpAppSnapshot[]>`
    select ${snapshotColumns(sql)} from mcp_app_snapshots s
    where s.environment_id = ${environmentId}
      and (s.version = (select a.accepted_version from mcp_apps a
                        where a.environment_id = s.environment_id and a.id = s.app_id)
        or s.version = (select max(l.version) from mcp_app_snapshots l
                        where l.environment_id = s.environment_id and l.app_id = s.app_id))`;
  return apps.map((app) => {
    const own = snapshots.filter((snapshot) => snapshot.appId === app.id);
    const accepted = own.find((snapshot) => snapshot.version === app.acceptedVersion) ?? null;
    const latest = own.reduce<McpAppSnapshot | null>(
      (newest, snapshot) => (newest && newest.version >= snapshot.version ? newest : snapshot),
      null,
    );
    return { app, accepted, latest };
  });
}

export interface NewMcpApp {
  environmentId: string;
  id: string;
  name: string;
  serverUrl: string;
  auth: McpApp['auth'];
  toolAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  /** The agent of the key that registered it (`cli` from the command line). */
  updatedBy: string;
  /** What the registration's listing negotiated; null when the server asked for authorization. */
  protocolVersion: string | null;
}

/**
 * The writes below lock the app's row or write several rows: they run inside the caller's
 * transaction (`sql.begin`), with the audit event of the change, so a change is never kept
 * without its record.
 */
type Tx = postgres.TransactionSql<Record<string, unknown>>;

const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as postgres.JSONValue;

/**
 * Registers an app, with its first snapshot when the server listed its tools: version 1,
 * accepted by the registration itself (the operator's act) when `accept`, else pending. Null when
 * the id is taken in the environment. One transaction: an app never exists without the snapshot
 * it was registered with.
 */
export async function insertMcpApp(
  tx: Tx,
  input: NewMcpApp,
  tools: McpToolDefinition[] | null,
  accept: boolean,
): Promise<McpAppStanding | null> {
  const accepted = tools !== null && accept;
  // Serializes registrations of one id across both registries of the environment (the OpenAPI
  // registry takes the same lock): an id an OpenAPI app took meanwhile is refused here.
  await tx`select pg_advisory_xact_lock(hashtext(${`app-id:${input.environmentId}:${input.id}`}))`;
  const [openapi]: [{ one: number }?] = await tx`
    select 1 as one from openapi_apps where environment_id = ${input.environmentId} and id = ${input.id}`;
  if (openapi) return null;
  const [created]: [McpApp?] = await tx`
      insert into mcp_apps (environment_id, id, name, server_url, auth, tool_allowlist,
        grade_overrides, accepted_version, tools_checked_at, protocol_version, updated_by)
      values (${input.environmentId}, ${input.id}, ${input.name}, ${input.serverUrl}, ${input.auth},
        ${input.toolAllowlist}, ${tx.json(asJson(input.gradeOverrides))},
        ${accepted ? 1 : null}, ${tools === null ? null : tx`now()`}, ${input.protocolVersion},
        ${input.updatedBy})
      on conflict (environment_id, id) do nothing
      returning ${appColumns(tx)}`;
  if (!created) return null;
  if (tools === null) return { app: created, accepted: null, latest: null };
  const [snapshot]: [McpAppSnapshot?] = await tx`
      insert into mcp_app_snapshots (environment_id, app_id, version, tools, fetched_by,
        accepted_at, accepted_by)
      values (${input.environmentId}, ${input.id}, 1, ${tx.json(asJson(tools))}, ${input.updatedBy},
        ${accepted ? tx`now()` : null}, ${accepted ? input.updatedBy : null})
      returning ${snapshotColumns(tx)}`;
  if (!snapshot) throw new Error('the first snapshot was not written');
  return { app: created, accepted: accepted ? snapshot : null, latest: snapshot };
}

/** What a refresh did: `created` false when the server listed exactly the newest snapshot. */
export interface RecordedSnapshot extends McpAppStanding {
  latest: McpAppSnapshot;
  created: boolean;
}

/**
 * Keeps what a refresh listed: a new version when it differs from the newest snapshot (jsonb
 * equality: key order does not count), else only the time it was checked and the protocol
 * revision negotiated. Refreshes of one app are serialized on its row, so two never take the
 * same version. Null: the app is gone.
 */
export async function recordSnapshot(
  tx: Tx,
  app: Pick<McpApp, 'environmentId' | 'id'>,
  listed: { tools: McpToolDefinition[]; protocolVersion: string | null },
  fetchedBy: string,
): Promise<RecordedSnapshot | null> {
  const { tools } = listed;
  const [locked]: [McpApp?] = await tx`
      select ${appColumns(tx)} from mcp_apps
      where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!locked) return null;
  const newest = await findLatestSnapshot(tx, app);
  const json = tx.json(asJson(tools));
  const [same]: [{ same: boolean }?] = newest
    ? await tx`select ${json}::jsonb = ${tx.json(asJson(newest.tools))}::jsonb as same`
    : [];
  let latest = newest;
  if (!newest || !same?.same) {
    const [inserted]: [McpAppSnapshot?] = await tx`
        insert into mcp_app_snapshots (environment_id, app_id, version, tools, fetched_by)
        values (${app.environmentId}, ${app.id}, ${(newest?.version ?? 0) + 1}, ${json},
          ${fetchedBy})
        returning ${snapshotColumns(tx)}`;
    latest = inserted ?? null;
  }
  if (!latest) throw new Error('the snapshot was not written');
  const [checked]: [McpApp?] = await tx`
      update mcp_apps set tools_checked_at = now(), protocol_version = ${listed.protocolVersion}
      where environment_id = ${app.environmentId} and id = ${app.id}
      returning ${appColumns(tx)}`;
  if (!checked) throw new Error('the app row vanished under its lock');
  const accepted = await findAcceptedSnapshot(tx, checked);
  return { app: checked, accepted, latest, created: latest !== newest };
}

export type AcceptOutcome =
  | { outcome: 'not_found' }
  | { outcome: 'no_such_version' }
  | { outcome: 'accepted'; standing: McpAppStanding; previous: number | null };

/**
 * Makes `version` the snapshot calls use. Accepting the one already accepted changes nothing
 * (its first acceptance keeps its time and author). Any version may be accepted, an older one
 * too: going back to a known definition is an operator's call.
 */
export async function acceptSnapshot(
  tx: Tx,
  app: Pick<McpApp, 'environmentId' | 'id'>,
  version: number,
  acceptedBy: string,
): Promise<AcceptOutcome> {
  const [locked]: [McpApp?] = await tx`
      select ${appColumns(tx)} from mcp_apps
      where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!locked) return { outcome: 'not_found' };
  const [snapshot]: [McpAppSnapshot?] = await tx`
      update mcp_app_snapshots
      set accepted_at = coalesce(accepted_at, now()), accepted_by = coalesce(accepted_by, ${acceptedBy})
      where environment_id = ${app.environmentId} and app_id = ${app.id} and version = ${version}
      returning ${snapshotColumns(tx)}`;
  if (!snapshot) return { outcome: 'no_such_version' };
  const [updated]: [McpApp?] = await tx`
      update mcp_apps set accepted_version = ${version},
        updated_at = case when accepted_version is distinct from ${version} then now() else updated_at end,
        updated_by = case when accepted_version is distinct from ${version} then ${acceptedBy} else updated_by end
      where environment_id = ${app.environmentId} and id = ${app.id}
      returning ${appColumns(tx)}`;
  if (!updated) throw new Error('the app row vanished under its lock');
  const latest = await findLatestSnapshot(tx, app);
  return {
    outcome: 'accepted',
    standing: { app: updated, accepted: snapshot, latest },
    previous: locked.acceptedVersion,
  };
}

export interface McpAppChanges {
  name?: string;
  /** null clears the allow-list (every tool of the accepted snapshot). */
  toolAllowlist?: string[] | null;
  /** Replaces the overrides whole. */
  gradeOverrides?: Record<string, CallScope>;
}

/** The app before and after the change; null when it does not exist. */
export async function updateMcpApp(
  tx: Tx,
  app: Pick<McpApp, 'environmentId' | 'id'>,
  changes: McpAppChanges,
  updatedBy: string,
): Promise<{ before: McpApp; after: McpApp } | null> {
  const [before]: [McpApp?] = await tx`
      select ${appColumns(tx)} from mcp_apps
      where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!before) return null;
  const [after]: [McpApp?] = await tx`
      update mcp_apps set
        name = ${changes.name ?? before.name},
        tool_allowlist = ${changes.toolAllowlist === undefined ? before.toolAllowlist : changes.toolAllowlist},
        grade_overrides = ${tx.json(asJson(changes.gradeOverrides ?? before.gradeOverrides))},
        updated_at = now(), updated_by = ${updatedBy}
      where environment_id = ${app.environmentId} and id = ${app.id}
      returning ${appColumns(tx)}`;
  if (!after) throw new Error('the app row vanished under its lock');
  return { before, after };
}

/**
 * Removes the app and its snapshots, and revokes its users' live connections here (tokens
 * erased, rows kept for audit, as deleting a connection does): an app registered later under
 * the same id may be another server, which must never receive these users' tokens. The app as
 * it was and how many connections were revoked, or null when there was no such app.
 */
export async function deleteMcpApp(
  tx: Tx,
  app: Pick<McpApp, 'environmentId' | 'id'>,
): Promise<{ app: McpApp; revokedConnections: number } | null> {
  const [deleted]: [McpApp?] = await tx`
      delete from mcp_apps where environment_id = ${app.environmentId} and id = ${app.id}
      returning ${appColumns(tx)}`;
  if (!deleted) return null;
  const revoked = await tx`
      update connections set status = 'revoked', access_token_sealed = null,
        refresh_token_sealed = null, revoked_at = coalesce(revoked_at, now()), updated_at = now()
      where environment_id = ${app.environmentId} and app = ${app.id} and status <> 'revoked'`;
  return { app: deleted, revokedConnections: revoked.count };
}
