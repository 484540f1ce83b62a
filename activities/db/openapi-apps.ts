import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type {
  NameCollision,
  OperationDescriptor,
  PinnedOperation,
  SkippedOperation,
} from '../openapi-apps/index.js';
import type { AuthScheme } from '../openapi-apps/descriptors.js';

/** A REST API imported from its OpenAPI document as an app of an environment. */
export interface OpenApiApp {
  environmentId: string;
  id: string;
  name: string;
  /** Where every call goes (pinned): the override, else the document's server as imported. */
  baseUrl: string;
  baseUrlOverride: string | null;
  /** Where the document was fetched from; null when it was given inline. */
  documentUrl: string | null;
  operationAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  trustDocumentGrades: boolean;
  /**
   * The document's security scheme the app's users connect with, as the operator chose it; null:
   * chosen from the accepted snapshot (activities/openapi-registry/connection-scheme.ts).
   */
  authScheme: string | null;
  acceptedVersion: number | null;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

/** What an import found besides the operations, kept with the snapshot for the app's GET. */
export interface ImportSummary {
  specification: string;
  title: string | null;
  version: string | null;
  baseUrl: string;
  skipped: SkippedOperation[];
  collisions: NameCollision[];
  auth: Record<string, AuthScheme>;
  /**
   * The supported schemes by how many operations each alone serves, most first, counted at import
   * over the whole snapshot (connection-scheme.ts); absent from snapshots kept before it was.
   */
  schemeUse?: { name: string; operations: number }[];
  unmatched: { allowlist: string[]; gradeOverrides: string[] };
}

export interface OpenApiAppSnapshot {
  environmentId: string;
  appId: string;
  version: number;
  operations: PinnedOperation[];
  digest: string;
  descriptors: OperationDescriptor[];
  import: ImportSummary;
  documentUrl: string | null;
  fetchedAt: Date;
  fetchedBy: string;
  acceptedAt: Date | null;
  acceptedBy: string | null;
}

/** An app with the two snapshots its operations are judged by: the accepted one and the newest. */
export interface OpenApiAppStanding {
  app: OpenApiApp;
  accepted: OpenApiAppSnapshot | null;
  latest: OpenApiAppSnapshot | null;
}

/** What a snapshot is made of, before it has a version. */
export interface NewSnapshot {
  operations: PinnedOperation[];
  digest: string;
  descriptors: OperationDescriptor[];
  import: ImportSummary;
  documentUrl: string | null;
}

const appColumns = (sql: Db) => sql`
  environment_id, id, name, base_url, base_url_override, document_url, operation_allowlist,
  grade_overrides, trust_document_grades, auth_scheme, accepted_version, created_at, updated_at,
  updated_by`;

const snapshotColumns = (sql: Db) => sql`
  environment_id, app_id, version, operations, digest, descriptors, import, document_url,
  fetched_at, fetched_by, accepted_at, accepted_by`;

type Tx = postgres.TransactionSql<Record<string, unknown>>;

const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as postgres.JSONValue;

export async function findOpenApiApp(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<OpenApiApp | null> {
  const [row]: [OpenApiApp?] = await sql`
    select ${appColumns(sql)} from openapi_apps
    where environment_id = ${environmentId} and id = ${id}`;
  return row ?? null;
}

export async function findOpenApiSnapshot(
  sql: Db,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
  version: number,
): Promise<OpenApiAppSnapshot | null> {
  const [row]: [OpenApiAppSnapshot?] = await sql`
    select ${snapshotColumns(sql)} from openapi_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id} and version = ${version}`;
  return row ?? null;
}

async function latestVersion(
  sql: Db,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
): Promise<{ version: number; digest: string } | null> {
  const [row]: [{ version: number; digest: string }?] = await sql`
    select version, digest from openapi_app_snapshots
    where environment_id = ${app.environmentId} and app_id = ${app.id}
    order by version desc limit 1`;
  return row ?? null;
}

export async function findOpenApiAppStanding(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<OpenApiAppStanding | null> {
  const app = await findOpenApiApp(sql, environmentId, id);
  if (!app) return null;
  const newest = await latestVersion(sql, app);
  const accepted =
    app.acceptedVersion === null ? null : await findOpenApiSnapshot(sql, app, app.acceptedVersion);
  const latest =
    newest === null
      ? null
      : newest.version === accepted?.version
        ? accepted
        : await findOpenApiSnapshot(sql, app, newest.version);
  return { app, accepted, latest };
}

/** The parts of a snapshot narrowed to one operation that never change once it is kept. */
type NarrowedParts = Pick<OpenApiAppSnapshot, 'descriptors' | 'operations' | 'import'>;

/**
 * Narrowed snapshots already read by this process, by `<environment>/<app>/<version>/<fetched
 * at, to the microsecond>/<operation>`. A snapshot's operations, descriptors and import summary
 * are written once and never updated, and an app deleted and registered again under its id starts
 * anew with other import times, so an entry never goes stale. Bounded: the oldest read goes first.
 */
const narrowed = new Map<string, NarrowedParts>();
const NARROWED_ENTRIES = 2_000;

function remember(key: string, parts: NarrowedParts): void {
  narrowed.set(key, parts);
  if (narrowed.size > NARROWED_ENTRIES) {
    const [oldest] = narrowed.keys();
    if (oldest !== undefined) narrowed.delete(oldest);
  }
}

interface SnapshotHead extends Omit<OpenApiAppSnapshot, keyof NarrowedParts> {
  fetchedKey: string;
}

/**
 * The app with its accepted and newest snapshots narrowed to one operation (its descriptor and
 * pinned form, where each has it): what judging or sending one call needs. A large document's
 * snapshot (GitHub's holds over a thousand descriptors, megabytes of JSON) is filtered in Postgres
 * rather than read whole, and only the first time this process judges that operation of that
 * snapshot: after that, one small read says which snapshots are current. operation-standing.ts
 * judges a narrowed standing as the whole one (the import summary is kept whole).
 */
export async function findOpenApiOperationStanding(
  sql: Db,
  environmentId: string,
  id: string,
  operation: string,
): Promise<OpenApiAppStanding | null> {
  const app = await findOpenApiApp(sql, environmentId, id);
  if (!app) return null;
  const heads = await sql<SnapshotHead[]>`
    select environment_id, app_id, version, digest, document_url, fetched_at, fetched_by,
      accepted_at, accepted_by, fetched_at::text as fetched_key
    from openapi_app_snapshots s
    where s.environment_id = ${environmentId} and s.app_id = ${id}
      and (s.version = ${app.acceptedVersion ?? -1}
        or s.version = (select max(version) from openapi_app_snapshots l
                         where l.environment_id = ${environmentId} and l.app_id = ${id}))`;
  const keyOf = (head: { version: number; fetchedKey: string }) =>
    `${environmentId}/${id}/${String(head.version)}/${head.fetchedKey}/${operation}`;
  const missing = heads.filter((head) => !narrowed.has(keyOf(head))).map((head) => head.version);
  if (missing.length > 0) {
    const rows = await sql<(NarrowedParts & { version: number; fetchedKey: string })[]>`
      select version, import, fetched_at::text as fetched_key,
        coalesce((select jsonb_agg(d) from jsonb_array_elements(s.descriptors) d
                   where d ->> 'name' = ${operation}), '[]'::jsonb) as descriptors,
        coalesce((select jsonb_agg(o) from jsonb_array_elements(s.operations) o
                   where o ->> 'name' = ${operation}), '[]'::jsonb) as operations
      from openapi_app_snapshots s
      where s.environment_id = ${environmentId} and s.app_id = ${id}
        and s.version = any(${missing}::int[])`;
    for (const row of rows) {
      remember(keyOf(row), {
        descriptors: row.descriptors,
        operations: row.operations,
        import: row.import,
      });
    }
  }
  const snapshots = heads.flatMap((head): OpenApiAppSnapshot[] => {
    const { fetchedKey, ...rest } = head;
    const parts = narrowed.get(keyOf({ version: head.version, fetchedKey }));
    return parts ? [{ ...rest, ...parts }] : [];
  });
  const accepted = snapshots.find((row) => row.version === app.acceptedVersion) ?? null;
  const latest = snapshots.reduce<OpenApiAppSnapshot | null>(
    (newest, row) => (newest && newest.version >= row.version ? newest : row),
    null,
  );
  return { app, accepted, latest };
}

/** Every app of an environment with its snapshots, in id order. */
export async function listOpenApiAppStandings(
  sql: Db,
  environmentId: string,
): Promise<OpenApiAppStanding[]> {
  const apps = await sql<OpenApiApp[]>`
    select ${appColumns(sql)} from openapi_apps where environment_id = ${environmentId}
    order by id`;
  const standings: OpenApiAppStanding[] = [];
  // One app at a time: a snapshot of a large document is megabytes, read only as needed.
  for (const app of apps) {
    const standing = await findOpenApiAppStanding(sql, environmentId, app.id);
    if (standing) standings.push(standing);
  }
  return standings;
}

/** Whether the environment has an OpenAPI app with this id (an MCP app's registration asks). */
export async function openApiAppExists(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<boolean> {
  const [row]: [{ one: number }?] = await sql`
    select 1 as one from openapi_apps where environment_id = ${environmentId} and id = ${id}`;
  return row !== undefined;
}

export interface NewOpenApiApp {
  environmentId: string;
  id: string;
  name: string;
  baseUrl: string;
  baseUrlOverride: string | null;
  documentUrl: string | null;
  operationAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  trustDocumentGrades: boolean;
  authScheme: string | null;
  updatedBy: string;
}

/**
 * Registers an app with its first snapshot, version 1, accepted by the registration when
 * `accept`. Null when the id is taken in the environment (by an OpenAPI or an MCP app: the
 * MCP app's row is locked-read in the same transaction). One transaction with the audit event.
 */
export async function insertOpenApiApp(
  tx: Tx,
  input: NewOpenApiApp,
  snapshot: NewSnapshot,
  accept: boolean,
): Promise<OpenApiAppStanding | null> {
  // Serializes registrations of one id across both registries of the environment.
  await tx`select pg_advisory_xact_lock(hashtext(${`app-id:${input.environmentId}:${input.id}`}))`;
  const [mcp]: [{ one: number }?] = await tx`
    select 1 as one from mcp_apps where environment_id = ${input.environmentId} and id = ${input.id}`;
  if (mcp) return null;
  const [created]: [OpenApiApp?] = await tx`
    insert into openapi_apps (environment_id, id, name, base_url, base_url_override, document_url,
      operation_allowlist, grade_overrides, trust_document_grades, auth_scheme, accepted_version,
      updated_by)
    values (${input.environmentId}, ${input.id}, ${input.name}, ${input.baseUrl},
      ${input.baseUrlOverride}, ${input.documentUrl}, ${input.operationAllowlist},
      ${tx.json(asJson(input.gradeOverrides))}, ${input.trustDocumentGrades}, ${input.authScheme},
      ${accept ? 1 : null}, ${input.updatedBy})
    on conflict (environment_id, id) do nothing
    returning ${appColumns(tx)}`;
  if (!created) return null;
  const [first]: [OpenApiAppSnapshot?] = await tx`
    insert into openapi_app_snapshots (environment_id, app_id, version, operations, digest,
      descriptors, import, document_url, fetched_by, accepted_at, accepted_by)
    values (${input.environmentId}, ${input.id}, 1, ${tx.json(asJson(snapshot.operations))},
      ${snapshot.digest}, ${tx.json(asJson(snapshot.descriptors))},
      ${tx.json(asJson(snapshot.import))}, ${snapshot.documentUrl}, ${input.updatedBy},
      ${accept ? tx`now()` : null}, ${accept ? input.updatedBy : null})
    returning ${snapshotColumns(tx)}`;
  if (!first) throw new Error('the first snapshot was not written');
  return { app: created, accepted: accept ? first : null, latest: first };
}

/** What a refresh did: `created` false when the import has the newest snapshot's digest. */
export interface RecordedOpenApiSnapshot extends OpenApiAppStanding {
  latest: OpenApiAppSnapshot;
  created: boolean;
}

/**
 * Keeps a new import as a new version when its operations differ from the newest snapshot's (by
 * digest). Refreshes of one app are serialized on its row. Null: the app is gone.
 */
export async function recordOpenApiSnapshot(
  tx: Tx,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
  snapshot: NewSnapshot,
  fetchedBy: string,
): Promise<RecordedOpenApiSnapshot | null> {
  const [locked]: [OpenApiApp?] = await tx`
    select ${appColumns(tx)} from openapi_apps
    where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!locked) return null;
  const newest = await latestVersion(tx, app);
  let version = newest?.version ?? 0;
  const created = newest === null || newest.digest !== snapshot.digest;
  if (created) {
    version += 1;
    await tx`
      insert into openapi_app_snapshots (environment_id, app_id, version, operations, digest,
        descriptors, import, document_url, fetched_by)
      values (${app.environmentId}, ${app.id}, ${version}, ${tx.json(asJson(snapshot.operations))},
        ${snapshot.digest}, ${tx.json(asJson(snapshot.descriptors))},
        ${tx.json(asJson(snapshot.import))}, ${snapshot.documentUrl}, ${fetchedBy})`;
  }
  const standing = await findOpenApiAppStanding(tx, app.environmentId, app.id);
  if (!standing?.latest) throw new Error('the app row vanished under its lock');
  return { ...standing, latest: standing.latest, created };
}

export type OpenApiAcceptOutcome =
  | { outcome: 'not_found' }
  | { outcome: 'no_such_version' }
  | { outcome: 'accepted'; standing: OpenApiAppStanding; previous: number | null };

/** Makes `version` the snapshot calls use; any kept version, an older one too. */
export async function acceptOpenApiSnapshot(
  tx: Tx,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
  version: number,
  acceptedBy: string,
): Promise<OpenApiAcceptOutcome> {
  const [locked]: [OpenApiApp?] = await tx`
    select ${appColumns(tx)} from openapi_apps
    where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!locked) return { outcome: 'not_found' };
  const marked = await tx`
    update openapi_app_snapshots
    set accepted_at = coalesce(accepted_at, now()), accepted_by = coalesce(accepted_by, ${acceptedBy})
    where environment_id = ${app.environmentId} and app_id = ${app.id} and version = ${version}`;
  if (marked.count === 0) return { outcome: 'no_such_version' };
  await tx`
    update openapi_apps set accepted_version = ${version},
      updated_at = case when accepted_version is distinct from ${version} then now() else updated_at end,
      updated_by = case when accepted_version is distinct from ${version} then ${acceptedBy} else updated_by end
    where environment_id = ${app.environmentId} and id = ${app.id}`;
  const standing = await findOpenApiAppStanding(tx, app.environmentId, app.id);
  if (!standing) throw new Error('the app row vanished under its lock');
  return { outcome: 'accepted', standing, previous: locked.acceptedVersion };
}

export interface OpenApiAppChanges {
  name?: string;
  /** null clears the allow-list. */
  operationAllowlist?: string[] | null;
  /** Replaces the overrides whole. */
  gradeOverrides?: Record<string, CallScope>;
  /** The new pinned base URL (the operator's override from now on). */
  baseUrl?: string;
  /** The scheme users connect with; null: chosen from the accepted snapshot. */
  authScheme?: string | null;
}

/** The app before and after the change; null when it does not exist. */
export async function updateOpenApiApp(
  tx: Tx,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
  changes: OpenApiAppChanges,
  updatedBy: string,
): Promise<{ before: OpenApiApp; after: OpenApiApp } | null> {
  const [before]: [OpenApiApp?] = await tx`
    select ${appColumns(tx)} from openapi_apps
    where environment_id = ${app.environmentId} and id = ${app.id} for update`;
  if (!before) return null;
  const [after]: [OpenApiApp?] = await tx`
    update openapi_apps set
      name = ${changes.name ?? before.name},
      operation_allowlist = ${changes.operationAllowlist === undefined ? before.operationAllowlist : changes.operationAllowlist},
      grade_overrides = ${tx.json(asJson(changes.gradeOverrides ?? before.gradeOverrides))},
      base_url = ${changes.baseUrl ?? before.baseUrl},
      base_url_override = ${changes.baseUrl ?? before.baseUrlOverride},
      auth_scheme = ${changes.authScheme === undefined ? before.authScheme : changes.authScheme},
      updated_at = now(), updated_by = ${updatedBy}
    where environment_id = ${app.environmentId} and id = ${app.id}
    returning ${appColumns(tx)}`;
  if (!after) throw new Error('the app row vanished under its lock');
  return { before, after };
}

/** Removes the app and its snapshots; the app as it was, or null when there was none. */
export async function deleteOpenApiApp(
  tx: Tx,
  app: Pick<OpenApiApp, 'environmentId' | 'id'>,
): Promise<OpenApiApp | null> {
  const [deleted]: [OpenApiApp?] = await tx`
    delete from openapi_apps where environment_id = ${app.environmentId} and id = ${app.id}
    returning ${appColumns(tx)}`;
  return deleted ?? null;
}
