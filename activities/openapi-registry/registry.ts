/**
 * REST APIs imported from their OpenAPI documents as apps of an environment: register, refresh,
 * accept a snapshot, change settings, delete. Each change is written with its audit event in one
 * transaction (the remote MCP registry's registry-audit.ts). Shared by the management API and
 * the command line. The import itself is the importer's (activities/openapi-apps), in a worker
 * thread of its own and within its limits.
 */
import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import { findApp, type CallScope } from '../../workflows/catalog/index.js';
import {
  importOpenApi,
  operationChanges,
  operationChangesInWords,
  hasOperationChanges,
  OpenApiImportError,
  snapshotDigest,
  snapshotOf,
  type ImportField,
  type ImportLimit,
  type OpenApiImport,
  type OperationChanges,
  type OperationDescriptor,
} from '../openapi-apps/index.js';
import { findMcpApp } from '../db/mcp-apps.js';
import {
  acceptOpenApiSnapshot,
  deleteOpenApiApp,
  findOpenApiApp,
  findOpenApiAppStanding,
  findOpenApiSnapshot,
  insertOpenApiApp,
  recordOpenApiSnapshot,
  updateOpenApiApp,
  type NewSnapshot,
  type OpenApiApp,
  type OpenApiAppChanges,
  type OpenApiAppStanding,
} from '../db/openapi-apps.js';
import { recordRegistryEvent, type RegistryActor } from '../mcp-apps/registry-audit.js';
import { serverUrlProblem } from '../mcp-apps/server-url.js';
import { DocumentFetchError, fetchDocument } from './document-fetch.js';
import { operationGradeOf } from './operation-standing.js';
import { connectionOf, rankSchemes, type OpenApiConnection } from './connection-scheme.js';
import { declareConnection, withdrawConnection } from './connection-declaration.js';

export interface OpenApiRegistryDeps {
  sql: Sql;
  config: Pick<Config, 'mcpApps' | 'upstream'>;
}

/** Which input a refusal is about, as the API names the field. */
export type OpenApiField = ImportField | 'document_url' | 'id' | 'auth_scheme';

export type OpenApiRegistryErrorKind =
  | 'catalog_id'
  | 'id_taken'
  /** The document, its URL or the base URL cannot be imported: the operator's input at fault. */
  | 'invalid'
  /** The document's host did not answer (in time): it may answer again. */
  | 'unreachable'
  | 'timeout'
  | 'not_found'
  | 'no_such_version'
  /** A refresh of an app given inline, with no new document. */
  | 'no_document';

export class OpenApiRegistryError extends Error {
  constructor(
    readonly kind: OpenApiRegistryErrorKind,
    message: string,
    readonly field: OpenApiField | null = null,
    readonly limit: ImportLimit | null = null,
  ) {
    super(message);
    this.name = 'OpenApiRegistryError';
  }
}

/** Where the document comes from: given as text, or fetched once from a URL. */
export type DocumentSource = { document: string } | { documentUrl: string };

export interface OpenApiRegistration {
  id: string;
  name: string;
  source: DocumentSource;
  baseUrl: string | null;
  operationAllowlist: string[] | null;
  gradeOverrides: Record<string, CallScope>;
  /**
   * The operator trusts the document's own `x-gatehouse-scope` grades: the first snapshot is
   * accepted by the registration even where they grade an operation.
   */
  trustDocumentGrades: boolean;
  /** The document's security scheme users connect with; null: chosen from the operations. */
  authScheme: string | null;
}

/** An import as the registry keeps it, with what was imported from where. */
interface Imported {
  imported: OpenApiImport;
  snapshot: NewSnapshot;
}

async function documentOf(
  deps: OpenApiRegistryDeps,
  source: DocumentSource,
): Promise<{ document: string | Uint8Array; documentUrl: string | null }> {
  if ('document' in source) return { document: source.document, documentUrl: null };
  try {
    const document = await fetchDocument(source.documentUrl, {
      allowPrivate: deps.config.mcpApps.allowPrivate,
      timeoutMs: deps.config.upstream.timeoutMs,
    });
    return { document, documentUrl: source.documentUrl };
  } catch (error) {
    if (!(error instanceof DocumentFetchError)) throw error;
    const kind =
      error.kind === 'timeout'
        ? 'timeout'
        : error.kind === 'unreachable'
          ? 'unreachable'
          : 'invalid';
    throw new OpenApiRegistryError(
      kind,
      `The document at document_url ${error.message}.`,
      'document_url',
      error.kind === 'too_large' ? 'document_bytes' : null,
    );
  }
}

/**
 * Imports the document (in the importer's worker) and checks the base URL it leads to as a
 * remote MCP server's URL is checked. Grade overrides are not given to the importer: a snapshot
 * pins the document's own grades, and the operator's overrides apply over them when a call is
 * judged, so changing an override never makes a new snapshot.
 */
async function imported(
  deps: OpenApiRegistryDeps,
  source: DocumentSource,
  settings: { baseUrl: string | null; operationAllowlist: string[] | null },
): Promise<Imported> {
  const { document, documentUrl } = await documentOf(deps, source);
  let result: OpenApiImport;
  try {
    result = await importOpenApi({
      document,
      documentUrl,
      baseUrl: settings.baseUrl,
      allowlist: settings.operationAllowlist,
    });
  } catch (error) {
    if (!(error instanceof OpenApiImportError)) throw error;
    const field: OpenApiField =
      error.field === 'document' && documentUrl !== null ? 'document_url' : error.field;
    throw new OpenApiRegistryError(
      'invalid',
      `The document cannot be imported${error.limit ? ` (limit ${error.limit})` : ''}: ${error.message}.`,
      field,
      error.limit,
    );
  }
  const problem = await serverUrlProblem(result.baseUrl.url, deps.config.mcpApps.allowPrivate);
  if (problem) {
    throw new OpenApiRegistryError(
      'invalid',
      `The app's base URL ${result.baseUrl.url} (${result.baseUrl.source === 'override' ? 'base_url' : "the document's servers"}) ${problem}.`,
      'base_url',
    );
  }
  const operations = snapshotOf(result.operations, result.auth);
  return {
    imported: result,
    snapshot: {
      operations,
      digest: snapshotDigest(operations),
      descriptors: result.operations,
      import: {
        specification: result.specification,
        title: result.title,
        version: result.version,
        baseUrl: result.baseUrl.url,
        skipped: result.skipped,
        collisions: result.collisions,
        auth: result.auth,
        schemeUse: rankSchemes({ descriptors: result.operations, import: { auth: result.auth } }),
        unmatched: result.unmatched,
      },
      documentUrl,
    },
  };
}

/**
 * The operations an agent could call whose grade only the document's `x-gatehouse-scope` gives,
 * as `name (grade)`: the document author's claim, which counts once an operator has seen it.
 */
export function gradedByDocument(
  descriptors: readonly OperationDescriptor[],
  settings: { operationAllowlist: string[] | null; gradeOverrides: Record<string, CallScope> },
): string[] {
  return descriptors
    .filter(
      (one) =>
        settings.operationAllowlist === null || settings.operationAllowlist.includes(one.name),
    )
    .map((one) => ({ name: one.name, ...operationGradeOf(one, settings.gradeOverrides) }))
    .filter((graded) => graded.source === 'extension')
    .map((graded) => `${graded.name} (${graded.grade})`);
}

function gradesOf(
  descriptors: readonly OperationDescriptor[],
  overrides: Readonly<Record<string, CallScope>>,
): Record<string, { grade: CallScope; source: string }> {
  return Object.fromEntries(descriptors.map((one) => [one.name, operationGradeOf(one, overrides)]));
}

/** How users connect, for audit and answers: the scheme's name and kind. */
export function connectionInWords(connection: OpenApiConnection): {
  kind: OpenApiConnection['kind'];
  scheme: string | null;
} {
  return {
    kind: connection.kind,
    scheme: connection.kind === 'none' ? null : connection.schemeName,
  };
}

/** An operator's chosen scheme must be one the app can be connected with. */
function assertServable(connection: OpenApiConnection): void {
  if (connection.kind !== 'unservable') return;
  throw new OpenApiRegistryError(
    'invalid',
    `Invalid auth_scheme: ${connection.reason}.`,
    'auth_scheme',
  );
}

function idTaken(id: string): OpenApiRegistryError {
  return new OpenApiRegistryError('id_taken', `The environment already has an app "${id}".`, 'id');
}

/**
 * Registers an app: the document is imported first, so nothing is stored for one that cannot
 * be. Its operations are snapshot v1, accepted by the registration (the operator chose the
 * document by registering it) unless the document's own `x-gatehouse-scope` grades an operation
 * an agent could call: that is the document author's word, which decides nothing until an
 * operator has seen it, or registered the app trusting it.
 */
export async function registerOpenApiApp(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  input: OpenApiRegistration,
): Promise<OpenApiAppStanding> {
  if (findApp(input.id)) {
    throw new OpenApiRegistryError(
      'catalog_id',
      `"${input.id}" is a catalog app's id; choose another id for the OpenAPI app.`,
      'id',
    );
  }
  if (
    (await findOpenApiApp(deps.sql, actor.environmentId, input.id)) ||
    (await findMcpApp(deps.sql, actor.environmentId, input.id))
  ) {
    throw idTaken(input.id);
  }
  const { snapshot } = await imported(deps, input.source, input);
  if (input.authScheme !== null) assertServable(connectionOf(input, snapshot));
  const hinted = gradedByDocument(snapshot.descriptors, input);
  const accept = input.trustDocumentGrades || hinted.length === 0;
  const registered = await deps.sql.begin(async (tx) => {
    const created = await insertOpenApiApp(
      tx,
      {
        environmentId: actor.environmentId,
        id: input.id,
        name: input.name,
        baseUrl: snapshot.import.baseUrl,
        baseUrlOverride: input.baseUrl,
        documentUrl: snapshot.documentUrl,
        operationAllowlist: input.operationAllowlist,
        gradeOverrides: input.gradeOverrides,
        trustDocumentGrades: input.trustDocumentGrades,
        authScheme: input.authScheme,
        updatedBy: actor.agentId,
      },
      snapshot,
      accept,
    );
    if (!created) return null;
    const connection = await declareConnection(tx, created);
    const count = `${String(snapshot.descriptors.length)} operations`;
    const registeredFrom = `registered OpenAPI app from ${snapshot.documentUrl ?? 'a document given inline'} (base URL ${snapshot.import.baseUrl})`;
    await recordRegistryEvent(tx, actor, {
      app: input.id,
      operation: 'register',
      decision: 'allowed',
      reason:
        hinted.length === 0
          ? `${registeredFrom}; snapshot v1 (${count}) accepted by the registration: no grade comes from the document's x-gatehouse-scope`
          : input.trustDocumentGrades
            ? `${registeredFrom}; snapshot v1 (${count}) accepted by the registration, trusting the document's grades: ${hinted.join(', ')}`
            : `${registeredFrom}; snapshot v1 (${count}) waits for an operator's acceptance: the document's own x-gatehouse-scope grades ${hinted.join(', ')}`,
      request: {
        id: input.id,
        name: input.name,
        document_url: snapshot.documentUrl,
        base_url: input.baseUrl,
        operation_allowlist: input.operationAllowlist,
        grade_overrides: input.gradeOverrides,
        trust_document_grades: input.trustDocumentGrades,
        auth_scheme: input.authScheme,
      },
      response: {
        accepted_version: created.app.acceptedVersion,
        connection: connectionInWords(connection),
        digest: snapshot.digest,
        base_url: created.app.baseUrl,
        operations: snapshot.descriptors.length,
        // Each grade with its source: what the registration let agents call, on whose word.
        grades: gradesOf(snapshot.descriptors, input.gradeOverrides),
      },
    });
    return created;
  });
  if (!registered) throw idTaken(input.id);
  return registered;
}

async function appOrNotFound(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  id: string,
): Promise<OpenApiApp> {
  const app = await findOpenApiApp(deps.sql, actor.environmentId, id);
  if (!app) throw new OpenApiRegistryError('not_found', `OpenAPI app "${id}"`);
  return app;
}

export interface OpenApiRefreshed {
  standing: OpenApiAppStanding;
  created: boolean;
  changes: OperationChanges;
}

/**
 * Imports the document again (fetched again from its URL, or the one given) and keeps it as a
 * new snapshot when its operations differ from the newest. The base URL stays pinned: a
 * document that now names another server changes nothing of where calls go. A new snapshot that
 * differs from the accepted one is pending, recorded in the audit log with what changed.
 */
export async function refreshOpenApiApp(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  id: string,
  document: string | null,
): Promise<OpenApiRefreshed> {
  const app = await appOrNotFound(deps, actor, id);
  let source: DocumentSource;
  if (document !== null) source = { document };
  else if (app.documentUrl !== null) source = { documentUrl: app.documentUrl };
  else {
    throw new OpenApiRegistryError(
      'no_document',
      `App "${id}" was registered with a document given inline: refresh it with the new document in the body ({"document": …}).`,
      'document',
    );
  }
  // The pinned base URL is given as the override: relative servers need no URL to resolve.
  const { snapshot } = await imported(deps, source, {
    baseUrl: app.baseUrl,
    operationAllowlist: app.operationAllowlist,
  });
  const refreshed = await deps.sql.begin(async (tx) => {
    const recorded = await recordOpenApiSnapshot(
      tx,
      app,
      { ...snapshot, documentUrl: snapshot.documentUrl ?? app.documentUrl },
      actor.agentId,
    );
    if (!recorded) return null;
    const changes = operationChanges(
      recorded.accepted?.operations ?? null,
      recorded.latest.operations,
    );
    if (recorded.created && hasOperationChanges(changes)) {
      const version = recorded.latest.version;
      await recordRegistryEvent(tx, actor, {
        app: id,
        operation: 'refresh',
        decision: 'blocked',
        reason: `snapshot v${String(version)} differs from the accepted ${recorded.accepted ? `snapshot v${String(recorded.accepted.version)}` : 'none'} and is pending an operator's acceptance: ${operationChangesInWords(changes)}`,
        request: { id, document_url: document === null ? app.documentUrl : null },
        response: {
          version,
          accepted_version: recorded.app.acceptedVersion,
          digest: recorded.latest.digest,
          changes,
        },
      });
    }
    return { standing: recorded, created: recorded.created, changes };
  });
  if (!refreshed) throw new OpenApiRegistryError('not_found', `OpenAPI app "${id}"`);
  return refreshed;
}

/** Makes `version` the snapshot calls use: the operator's act that ends the pinning refusals. */
export async function acceptOpenApiAppSnapshot(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  id: string,
  version: number,
): Promise<OpenApiAppStanding> {
  return deps.sql.begin(async (tx) => {
    const app = { environmentId: actor.environmentId, id };
    const result = await acceptOpenApiSnapshot(tx, app, version, actor.agentId);
    if (result.outcome === 'not_found') {
      throw new OpenApiRegistryError('not_found', `OpenAPI app "${id}"`);
    }
    if (result.outcome === 'no_such_version') {
      throw new OpenApiRegistryError(
        'no_such_version',
        `Snapshot v${String(version)} of OpenAPI app "${id}"`,
      );
    }
    const { standing, previous } = result;
    await declareConnection(tx, standing);
    if (previous !== version) {
      const before = previous === null ? null : await findOpenApiSnapshot(tx, app, previous);
      const changes = operationChanges(
        before?.operations ?? null,
        standing.accepted?.operations ?? [],
      );
      await recordRegistryEvent(tx, actor, {
        app: id,
        operation: 'accept',
        decision: 'allowed',
        reason: `snapshot v${String(version)} accepted (was ${previous === null ? 'none' : `v${String(previous)}`}): ${operationChangesInWords(changes)}`,
        request: { id, version },
        response: {
          accepted_version: version,
          previous_version: previous,
          digest: standing.accepted?.digest ?? null,
          changes,
          grades: gradesOf(standing.accepted?.descriptors ?? [], standing.app.gradeOverrides),
        },
      });
    }
    return standing;
  });
}

/**
 * Name, allow-list, grade overrides and base URL. A new base URL is checked as at registration
 * and pinned from now on; it takes effect for every call, held ones included when they run.
 */
export async function updateOpenApiAppSettings(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  id: string,
  changes: OpenApiAppChanges,
): Promise<OpenApiApp> {
  if (changes.baseUrl !== undefined) {
    const problem = await serverUrlProblem(changes.baseUrl, deps.config.mcpApps.allowPrivate);
    if (problem) {
      throw new OpenApiRegistryError('invalid', `Invalid base_url: ${problem}.`, 'base_url');
    }
    changes = { ...changes, baseUrl: changes.baseUrl.replace(/\/+$/, '') };
  }
  return deps.sql.begin(async (tx) => {
    const app = { environmentId: actor.environmentId, id };
    const updated = await updateOpenApiApp(tx, app, changes, actor.agentId);
    if (!updated) throw new OpenApiRegistryError('not_found', `OpenAPI app "${id}"`);
    const { before, after } = updated;
    const standing = await findOpenApiAppStanding(tx, after.environmentId, after.id);
    if (!standing) throw new Error('the app row vanished under its lock');
    const connection = await declareConnection(tx, standing);
    if (changes.authScheme !== undefined && changes.authScheme !== null) {
      assertServable(connection);
    }
    const view = (one: OpenApiApp) => ({
      name: one.name,
      base_url: one.baseUrl,
      operation_allowlist: one.operationAllowlist,
      grade_overrides: one.gradeOverrides,
      auth_scheme: one.authScheme,
    });
    await recordRegistryEvent(tx, actor, {
      app: id,
      operation: 'update',
      decision: 'allowed',
      reason: `settings changed: ${Object.keys(changes).join(', ') || 'nothing'}`,
      request: {
        id,
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.baseUrl === undefined ? {} : { base_url: changes.baseUrl }),
        ...(changes.operationAllowlist === undefined
          ? {}
          : { operation_allowlist: changes.operationAllowlist }),
        ...(changes.gradeOverrides === undefined
          ? {}
          : { grade_overrides: changes.gradeOverrides }),
        ...(changes.authScheme === undefined ? {} : { auth_scheme: changes.authScheme }),
      },
      response: {
        before: view(before),
        after: view(after),
        connection: connectionInWords(connection),
      },
    });
    return after;
  });
}

/** Deletes the app and its snapshots; held calls to its operations are refused when they run. */
export async function removeOpenApiApp(
  deps: OpenApiRegistryDeps,
  actor: RegistryActor,
  id: string,
): Promise<OpenApiApp> {
  return deps.sql.begin(async (tx) => {
    const deleted = await deleteOpenApiApp(tx, { environmentId: actor.environmentId, id });
    if (!deleted) throw new OpenApiRegistryError('not_found', `OpenAPI app "${id}"`);
    await withdrawConnection(tx, actor.environmentId, id);
    await recordRegistryEvent(tx, actor, {
      app: id,
      operation: 'delete',
      decision: 'allowed',
      reason: `OpenAPI app deleted (base URL ${deleted.baseUrl})`,
      request: { id },
      response: { accepted_version: deleted.acceptedVersion },
    });
    return deleted;
  });
}
