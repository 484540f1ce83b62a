/**
 * `gatehouse apps import` and the OpenAPI side of `apps show|list|refresh|accept|remove`: REST
 * APIs imported from their OpenAPI documents, as the management API's /v1/openapi-apps does,
 * through the same registry (activities/openapi-registry), recorded as agent `cli`.
 */
import { readFile } from 'node:fs/promises';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import {
  findOpenApiAppStanding,
  listOpenApiAppStandings,
  openApiAppExists,
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
  type DocumentSource,
} from '../../activities/openapi-registry/registry.js';
import { operationChangesInWords } from '../../activities/openapi-apps/index.js';
import {
  acceptOpenApiAppBody,
  registerOpenApiAppBody,
  updateOpenApiAppBody,
} from '../../api/openapi-apps/inputs.js';
import { presentOpenApiApp } from '../../api/presenters/openapi-apps.js';
import type { Sql } from '../database/client.js';
import type { McpAppSettings } from './mcp-apps.js';
import { parseGrades, parseToolList } from './mcp-apps.js';
import { listOutput } from './table.js';

export interface OpenApiAppCommandOptions {
  env: string;
  json?: boolean;
}

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

function failed(error: unknown): never {
  if (error instanceof OpenApiRegistryError) {
    const flags: Record<string, string> = {
      document: '--file',
      document_url: '--url',
      base_url: '--base-url',
      operation_allowlist: '--allow',
      grade_overrides: '--grade',
      id: '<app>',
    };
    const flag = error.field ? `${flags[error.field] ?? error.field}: ` : '';
    throw new Error(`${flag}${error.message}`);
  }
  throw error;
}

function parsed<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const named: Record<string, string> = {
    id: '<app>',
    document: '--file',
    document_url: '--url',
    base_url: '--base-url',
    operation_allowlist: '--allow',
    grade_overrides: '--grade',
  };
  throw new Error(
    result.error.issues
      .map((issue) => {
        const field = String(issue.path[0] ?? 'input');
        return `${named[field] ?? `--${field}`}: ${issue.message}`;
      })
      .join('; '),
  );
}

/** Whether `id` is an OpenAPI app of the environment (the shared apps commands ask). */
export async function isOpenApiAppIn(sql: Sql, env: string, id: string): Promise<boolean> {
  const environment = await findEnvironmentByName(sql, env);
  return environment ? openApiAppExists(sql, environment.id, id) : false;
}

/** How the app's users connect, in the words of `apps show`. */
function connectionLine(
  connection: { kind: string; scheme: string | null },
  chosen: string | null,
): string {
  const how =
    connection.kind === 'none'
      ? 'nothing (no operation needs a credential)'
      : connection.kind === 'oauth2'
        ? `through OAuth 2.0, scheme ${connection.scheme ?? ''}`
        : connection.kind === 'credential'
          ? `with a credential they enter, scheme ${connection.scheme ?? ''}`
          : `not at all: scheme ${connection.scheme ?? ''} cannot be served`;
  return `${how}${chosen === null ? '' : ' (chosen with --auth-scheme)'}`;
}

export function describeOpenApiApp(standing: OpenApiAppStanding, json?: boolean): string {
  const view = presentOpenApiApp(standing);
  if (json) return JSON.stringify(view, null, 2);
  const { snapshot } = view;
  const pending = snapshot.pending
    ? `snapshot v${String(snapshot.pending.version)} pending: ${operationChangesInWords(snapshot.pending.changes)} (apps accept ${view.app} --version ${String(snapshot.pending.version)})`
    : 'nothing pending';
  const operations = listOutput(
    view.operations,
    [
      ['OPERATION', (one) => one.name],
      ['METHOD', (one) => one.method],
      ['PATH', (one) => one.path],
      ['GRADE', (one) => `${one.grade} (${one.grade_source})`],
      ['CALLABLE', (one) => (one.callable ? 'yes' : `no: ${one.refused_because ?? ''}`)],
    ],
    { empty: '(no operations)' },
  );
  return [
    `app            ${view.app}`,
    `name           ${view.name}`,
    `auth kind      openapi`,
    `base URL       ${view.base_url} (pinned)`,
    `users connect  ${connectionLine(view.connection, view.auth_scheme)}`,
    `document       ${view.document_url ?? '(given inline)'}${view.document ? `: ${view.document.title ?? ''} ${view.document.version ?? ''} (OpenAPI ${view.document.specification})` : ''}`,
    `snapshot       accepted v${String(snapshot.accepted_version ?? 'none')}, latest v${String(snapshot.latest_version ?? 'none')}; ${pending}`,
    `skipped        ${String(view.skipped.length)} operations`,
    '',
    operations,
  ].join('\n');
}

export async function importOpenApiAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: OpenApiAppCommandOptions & {
    file?: string;
    url?: string;
    name?: string;
    baseUrl?: string;
    allow?: string;
    grade?: string;
    trustDocumentGrades?: boolean;
    authScheme?: string;
  },
): Promise<string> {
  if ((options.file === undefined) === (options.url === undefined)) {
    throw new Error('give exactly one of --file <path> and --url <url>');
  }
  const body = parsed(registerOpenApiAppBody, {
    id,
    name: options.name ?? id,
    ...(options.file === undefined ? { document_url: options.url } : { document: '-' }),
    ...(options.baseUrl === undefined ? {} : { base_url: options.baseUrl }),
    ...(options.allow === undefined ? {} : { operation_allowlist: parseToolList(options.allow) }),
    ...(options.grade === undefined ? {} : { grade_overrides: parseGrades(options.grade) }),
    ...(options.authScheme === undefined ? {} : { auth_scheme: options.authScheme }),
  });
  // A file is read here, as bytes: the importer's own size limit bounds it (no body limit).
  const source: DocumentSource =
    options.file === undefined
      ? { documentUrl: body.document_url ?? '' }
      : { document: await readFile(options.file, 'utf8') };
  const standing = await registerOpenApiApp(
    { sql, config: settings },
    await actorIn(sql, options.env),
    {
      id: body.id,
      name: body.name,
      source,
      baseUrl: body.base_url ?? null,
      operationAllowlist: body.operation_allowlist ?? null,
      gradeOverrides: body.grade_overrides ?? {},
      trustDocumentGrades: options.trustDocumentGrades ?? false,
      authScheme: body.auth_scheme ?? null,
    },
  ).catch(failed);
  return describeOpenApiApp(standing, options.json);
}

export async function refreshOpenApiAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: OpenApiAppCommandOptions & { file?: string },
): Promise<string> {
  const document = options.file === undefined ? null : await readFile(options.file, 'utf8');
  const refreshed = await refreshOpenApiApp(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
    document,
  ).catch(failed);
  return describeOpenApiApp(refreshed.standing, options.json);
}

export async function acceptOpenApiAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: OpenApiAppCommandOptions & { version: string },
): Promise<string> {
  const { version } = parsed(acceptOpenApiAppBody, { version: Number(options.version) });
  const standing = await acceptOpenApiAppSnapshot(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
    version,
  ).catch(failed);
  return describeOpenApiApp(standing, options.json);
}

export async function updateOpenApiAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: OpenApiAppCommandOptions & {
    name?: string;
    baseUrl?: string;
    allow?: string;
    allowAll?: boolean;
    grade?: string;
    authScheme?: string;
  },
): Promise<string> {
  if (options.allow !== undefined && options.allowAll) {
    throw new Error('give --allow or --allow-all, not both');
  }
  const body = parsed(updateOpenApiAppBody, {
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.baseUrl === undefined ? {} : { base_url: options.baseUrl }),
    ...(options.allow === undefined ? {} : { operation_allowlist: parseToolList(options.allow) }),
    ...(options.allowAll ? { operation_allowlist: null } : {}),
    ...(options.grade === undefined ? {} : { grade_overrides: parseGrades(options.grade) }),
    ...(options.authScheme === undefined ? {} : { auth_scheme: options.authScheme }),
  });
  const actor = await actorIn(sql, options.env);
  await updateOpenApiAppSettings({ sql, config: settings }, actor, id, {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.base_url === undefined ? {} : { baseUrl: body.base_url }),
    ...(body.operation_allowlist === undefined
      ? {}
      : { operationAllowlist: body.operation_allowlist }),
    ...(body.grade_overrides === undefined ? {} : { gradeOverrides: body.grade_overrides }),
    ...(body.auth_scheme === undefined ? {} : { authScheme: body.auth_scheme }),
  }).catch(failed);
  const standing = await findOpenApiAppStanding(sql, actor.environmentId, id);
  if (!standing) throw new Error(`no app "${id}" in environment "${options.env}"`);
  return describeOpenApiApp(standing, options.json);
}

export async function removeOpenApiAppCommand(
  sql: Sql,
  settings: McpAppSettings,
  id: string,
  options: OpenApiAppCommandOptions,
): Promise<string> {
  const removed = await removeOpenApiApp(
    { sql, config: settings },
    await actorIn(sql, options.env),
    id,
  ).catch(failed);
  return `removed OpenAPI app ${removed.id} and its snapshots`;
}

export async function showOpenApiAppCommand(
  sql: Sql,
  id: string,
  options: OpenApiAppCommandOptions,
): Promise<string> {
  const actor = await actorIn(sql, options.env);
  const standing = await findOpenApiAppStanding(sql, actor.environmentId, id);
  if (!standing) throw new Error(`no app "${id}" in environment "${options.env}"`);
  return describeOpenApiApp(standing, options.json);
}

/** The OpenAPI apps of an environment, one line each, for `apps list --env`. */
export async function openApiAppsTable(sql: Sql, env: string): Promise<string | null> {
  const actor = await actorIn(sql, env);
  const standings = await listOpenApiAppStandings(sql, actor.environmentId);
  if (standings.length === 0) return null;
  const views = standings.map(presentOpenApiApp);
  const table = listOutput(
    views,
    [
      ['APP', (view) => view.app],
      ['NAME', (view) => view.name],
      ['OPERATIONS', (view) => String(view.operations.filter((one) => one.callable).length)],
      [
        'PENDING',
        (view) =>
          view.snapshot.pending ? `snapshot v${String(view.snapshot.pending.version)}` : 'none',
      ],
      ['BASE URL', (view) => view.base_url],
    ],
    { empty: '' },
  );
  return [`OpenAPI apps of ${env}:`, table].join('\n');
}
