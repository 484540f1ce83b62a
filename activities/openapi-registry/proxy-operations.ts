/**
 * Reading what a proxy request to an OpenAPI app is judged by (proxy-standing.ts): the app, its
 * operations' names, methods, path templates and grades in the accepted and the newest
 * snapshots (taken out of the snapshots in Postgres: a large document's descriptors are never
 * read for this), and the full standing of only the operations the request matches.
 */
import type { Db } from '../../infra/database/client.js';
import { findApp, type CallScope } from '../../workflows/catalog/index.js';
import type { AppAction } from '../../workflows/policy.js';
import { findOpenApiApp, findOpenApiOperationStanding } from '../db/openapi-apps.js';
import { operationStanding, type CredentialUse } from './operation-standing.js';
import { connectionOf, type OpenApiConnection, type SchemeSource } from './connection-scheme.js';
import {
  proxyGrading,
  proxyPinningRefusal,
  type OpenApiProxyView,
  type ProxyGrading,
  type ProxyOperationRow,
} from './proxy-standing.js';

/**
 * The operation rows of snapshots already read by this process, by `<environment>/<app>/<version>/
 * <import time, to the microsecond>`: a snapshot's operations never change once kept, and an app
 * registered again under its id has other import times. Small (name, method, path, grade per
 * operation); bounded, the oldest read going first.
 */
const rowsRead = new Map<string, ProxyOperationRow[]>();
const ROWS_KEPT = 64;

/**
 * The app and its operations as the proxy matches them; null when it has no such app. Each
 * snapshot's operations are read from Postgres (out of its JSON) once per process.
 */
export async function findOpenApiProxyView(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<OpenApiProxyView | null> {
  const app = await findOpenApiApp(sql, environmentId, id);
  if (!app) return null;
  const heads = await sql<{ version: number; fetchedKey: string }[]>`
    select version, fetched_at::text as fetched_key from openapi_app_snapshots s
    where s.environment_id = ${environmentId} and s.app_id = ${id}
      and (s.version = ${app.acceptedVersion ?? -1}
        or s.version = (select max(version) from openapi_app_snapshots l
                         where l.environment_id = ${environmentId} and l.app_id = ${id}))`;
  const keyOf = (head: { version: number; fetchedKey: string }) =>
    `${environmentId}/${id}/${String(head.version)}/${head.fetchedKey}`;
  const missing = heads.filter((head) => !rowsRead.has(keyOf(head)));
  if (missing.length > 0) {
    const rows = await sql<(ProxyOperationRow & { fetchedKey: string })[]>`
      select s.version, s.fetched_at::text as fetched_key, o ->> 'name' as name,
        o ->> 'method' as method, o ->> 'path' as path, o ->> 'grade' as grade
      from openapi_app_snapshots s cross join lateral jsonb_array_elements(s.operations) o
      where s.environment_id = ${environmentId} and s.app_id = ${id}
        and s.version = any(${missing.map((head) => head.version)}::int[])`;
    for (const head of missing) {
      rowsRead.set(
        keyOf(head),
        rows
          .filter((row) => row.version === head.version)
          .map(({ version, name, method, path, grade }) => ({
            version,
            name,
            method,
            path,
            grade,
          })),
      );
      if (rowsRead.size > ROWS_KEPT) {
        const [oldest] = rowsRead.keys();
        if (oldest !== undefined) rowsRead.delete(oldest);
      }
    }
  }
  const latestVersion = heads.reduce<number | null>(
    (newest, head) => (newest !== null && newest >= head.version ? newest : head.version),
    null,
  );
  const operations = heads.flatMap((head) => rowsRead.get(keyOf(head)) ?? []);
  return { app, acceptedVersion: app.acceptedVersion, latestVersion, operations };
}

/** A proxy request as the preparation of its call judges it. */
export interface OpenApiProxyJudgement {
  grading: ProxyGrading;
  /** Why it may not reach the app (pinning), or null when policy decides. */
  refusal: string | null;
  /**
   * Whether it sends the user's credential: as the operations it matches do (the strictest of
   * theirs); `optional` when it matches none, since nothing says whether that endpoint needs one
   * (sent when the user has an active connection, as the catalog proxy always sends it).
   */
  credential: CredentialUse;
}

const CREDENTIAL_ORDER: readonly CredentialUse[] = ['none', 'optional', 'required'];

/**
 * The grading and the pinning refusal of `method path` (the canonical path) to the app, for a
 * call made at `madeAt`; null when the environment has no OpenAPI app `id`.
 */
export async function judgeOpenApiProxy(
  sql: Db,
  environmentId: string,
  id: string,
  request: { method: string; path: string; scope: CallScope },
): Promise<OpenApiProxyJudgement | null> {
  const view = await findOpenApiProxyView(sql, environmentId, id);
  if (!view) return null;
  const grading = proxyGrading(view, request.method, request.path);
  // Usually one operation, rarely a few (`/pets/{id}` and `/pets/mine` both match `/pets/mine`).
  const standings = await Promise.all(
    grading.matchedNames.map(async (name) => {
      const standing = await findOpenApiOperationStanding(sql, environmentId, id, name);
      return standing ? operationStanding(standing, name) : null;
    }),
  );
  const credential = standings.reduce<CredentialUse>(
    (use, standing) =>
      standing?.callable &&
      CREDENTIAL_ORDER.indexOf(standing.credential) > CREDENTIAL_ORDER.indexOf(use)
        ? standing.credential
        : use,
    standings.length === 0 ? 'optional' : 'none',
  );
  return {
    grading,
    refusal: proxyPinningRefusal(view, grading, standings, request.scope),
    credential,
  };
}

/** Where a proxy request to the app goes, and how its users connect. */
export interface OpenApiProxyConnection {
  baseUrl: string;
  connection: OpenApiConnection;
}

/**
 * The app's pinned base URL and how its users connect (connection-scheme.ts), reading of the
 * accepted snapshot only its schemes and the ranking kept with them at import (a snapshot kept
 * before the ranking was has each operation's security read instead); null when the environment
 * has no OpenAPI app `id`.
 */
export async function findOpenApiProxyConnection(
  sql: Db,
  environmentId: string,
  id: string,
): Promise<OpenApiProxyConnection | null> {
  const [row]: [
    {
      baseUrl: string;
      authScheme: string | null;
      acceptedVersion: number | null;
      auth: SchemeSource['import']['auth'] | null;
      schemeUse: SchemeSource['import']['schemeUse'] | null;
      descriptors: SchemeSource['descriptors'] | null;
    }?,
  ] = await sql`
    select a.base_url, a.auth_scheme, a.accepted_version, s.import -> 'auth' as auth,
      s.import -> 'schemeUse' as scheme_use,
      case when s.import ? 'schemeUse' then null else
        (select coalesce(jsonb_agg(jsonb_build_object('security', d -> 'security')), '[]'::jsonb)
           from jsonb_array_elements(s.descriptors) d) end as descriptors
    from openapi_apps a
    left join openapi_app_snapshots s
      on s.environment_id = a.environment_id and s.app_id = a.id and s.version = a.accepted_version
    where a.environment_id = ${environmentId} and a.id = ${id}`;
  if (!row) return null;
  const source: SchemeSource | null =
    row.acceptedVersion === null
      ? null
      : {
          descriptors: row.descriptors ?? [],
          import: { auth: row.auth ?? {}, ...(row.schemeUse ? { schemeUse: row.schemeUse } : {}) },
        };
  return {
    baseUrl: row.baseUrl,
    connection: connectionOf({ authScheme: row.authScheme }, source),
  };
}

/** A recorded or held proxy call, as far as its bounds need it. */
export interface RecordedProxyCall {
  id: string;
  /** `<app>.proxy`. */
  action: string;
  method: string;
  /** The canonical path below `/v1/proxy/{app}/`, as policy judged it. */
  path: string;
}

/**
 * The operations that bound each of these proxy calls to OpenAPI apps of the environment (the
 * `proxy` of `PolicySubject`), by call id, as a live call's preparation finds them: for views of
 * a call after the fact (the policy in force shown to approvers), which would otherwise judge it
 * as a catalog app's proxy with no actions, looser than the call itself is. Each app read once.
 */
export async function openApiProxyBounds(
  sql: Db,
  environmentId: string,
  calls: readonly RecordedProxyCall[],
): Promise<Map<string, { actions: AppAction[]; matched: AppAction[] }>> {
  const views = new Map<string, OpenApiProxyView | null>();
  const bounds = new Map<string, { actions: AppAction[]; matched: AppAction[] }>();
  for (const call of calls) {
    const app = call.action.slice(0, Math.max(0, call.action.indexOf('.')));
    if (findApp(app)) continue;
    if (!views.has(app)) views.set(app, await findOpenApiProxyView(sql, environmentId, app));
    const view = views.get(app);
    if (!view) continue;
    const { actions, matched } = proxyGrading(view, call.method, call.path);
    bounds.set(call.id, { actions, matched });
  }
  return bounds;
}
