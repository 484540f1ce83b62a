import { z } from 'zod';
import type { OpenApiAppStanding } from '../../activities/db/openapi-apps.js';
import { operationChanges } from '../../activities/openapi-apps/index.js';
import { operationStanding } from '../../activities/openapi-registry/operation-standing.js';
import { connectionOf } from '../../activities/openapi-registry/connection-scheme.js';
import { connectionInWords } from '../../activities/openapi-registry/registry.js';
import { iso, timestamp } from './timestamps.js';

const grade = z.enum(['read', 'write', 'destructive']);

const operationSchema = z.object({
  name: z.string().meta({ description: 'The operation name, as the import gives it' }),
  action: z
    .string()
    .meta({ description: '`<app>.<operation>`, as `/v1/actions/{action}/run` takes' }),
  method: z.string(),
  path: z.string().meta({ description: "The document's path template, below the base URL" }),
  summary: z.string().nullable(),
  grade: grade.meta({ description: 'What the policy governs it at' }),
  grade_source: z.enum(['override', 'extension', 'method']).meta({
    description:
      "Where the grade came from: the operator's override, the document's `x-gatehouse-scope`, or the method",
  }),
  needs_credential: z.boolean().meta({
    description: 'Whether its security requirement asks for a credential',
  }),
  callable: z.boolean(),
  refused_because: z
    .string()
    .nullable()
    .meta({ description: 'Why calls are refused (`denied_by_policy`), when they are' }),
});

const changesSchema = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(
    z.object({
      operation: z.string(),
      fields: z.array(
        z.enum([
          'method',
          'path',
          'grade',
          'summary',
          'description',
          'parameters',
          'body',
          'security',
        ]),
      ),
    }),
  ),
});

export const openApiAppSchema = z
  .object({
    app: z.string(),
    name: z.string(),
    auth_kind: z.literal('openapi'),
    base_url: z.string().meta({ description: 'Where every call goes (pinned)' }),
    document_url: z.string().nullable(),
    operation_allowlist: z.array(z.string()).nullable(),
    grade_overrides: z.record(z.string(), grade),
    trust_document_grades: z.boolean(),
    auth_scheme: z.string().nullable().meta({
      description:
        'The security scheme users connect with, as the operator chose it (null: chosen from the operations)',
    }),
    connection: z
      .object({
        kind: z.enum(['none', 'credential', 'oauth2', 'unservable']),
        scheme: z.string().nullable(),
      })
      .meta({
        description:
          "How the app's users connect, as of the accepted snapshot: `credential` (an API key, bearer token or basic credential entered on the hosted connect page), `oauth2` (the document's authorization-code flow), `none` (no operation needs a credential), or `unservable` (the chosen scheme cannot be served)",
      }),
    document: z
      .object({
        specification: z.string(),
        title: z.string().nullable(),
        version: z.string().nullable(),
      })
      .nullable()
      .meta({ description: 'What the newest snapshot was imported from' }),
    operations: z.array(operationSchema).meta({
      description: 'The operations of the accepted snapshot and of the newest, by name',
    }),
    skipped: z
      .array(
        z.object({
          method: z.string(),
          path: z.string(),
          operation_id: z.string().nullable(),
          reason: z.string(),
        }),
      )
      .meta({ description: "The newest import's operations that are not actions, and why" }),
    collisions: z
      .array(z.object({ name: z.string(), operations: z.array(z.string()) }))
      .meta({ description: 'Operations whose names came out alike: the others got `_2`, `_3`, …' }),
    unmatched: z.object({
      operation_allowlist: z.array(z.string()),
      grade_overrides: z.array(z.string()),
    }),
    snapshot: z.object({
      accepted_version: z.int().nullable(),
      latest_version: z.int().nullable(),
      accepted_digest: z.string().nullable(),
      latest_fetched_at: timestamp.nullable(),
      pending: z
        .object({
          version: z.int(),
          fetched_at: timestamp,
          digest: z.string(),
          changes: changesSchema,
        })
        .nullable()
        .meta({ description: 'The newest snapshot, when it differs from the accepted one' }),
    }),
  })
  .meta({ id: 'openapi_app' });

export type OpenApiAppView = z.infer<typeof openApiAppSchema>;

export function presentOpenApiApp(standing: OpenApiAppStanding): OpenApiAppView {
  const { app, accepted, latest } = standing;
  const names = new Set([
    ...(accepted?.descriptors ?? []).map((one) => one.name),
    ...(latest?.descriptors ?? []).map((one) => one.name),
  ]);
  const operations = [...names].sort().flatMap((name) => {
    const judged = operationStanding(standing, name);
    if (!judged) return [];
    const { descriptor } = judged;
    return [
      {
        name,
        action: `${app.id}.${name}`,
        method: descriptor.method,
        path: descriptor.path,
        summary: descriptor.summary,
        grade: judged.grade,
        grade_source: judged.gradeSource,
        needs_credential:
          descriptor.security.length > 0 &&
          !descriptor.security.some((alternative) => alternative.schemes.length === 0),
        callable: judged.callable,
        refused_because: judged.callable ? null : judged.reason,
      },
    ];
  });
  const pending = latest && latest.version !== accepted?.version ? latest : null;
  const summary = latest?.import ?? null;
  const overrides = Object.keys(app.gradeOverrides).filter((name) => !names.has(name));
  return {
    app: app.id,
    name: app.name,
    auth_kind: 'openapi',
    base_url: app.baseUrl,
    document_url: app.documentUrl,
    operation_allowlist: app.operationAllowlist,
    grade_overrides: app.gradeOverrides,
    trust_document_grades: app.trustDocumentGrades,
    auth_scheme: app.authScheme,
    connection: connectionInWords(connectionOf(app, accepted)),
    document: summary
      ? { specification: summary.specification, title: summary.title, version: summary.version }
      : null,
    operations,
    skipped: (summary?.skipped ?? []).map((one) => ({
      method: one.method,
      path: one.path,
      operation_id: one.operationId,
      reason: one.reason,
    })),
    collisions: (summary?.collisions ?? []).map((one) => ({
      name: one.name,
      operations: one.operations.map((operation) => `${operation.method} ${operation.path}`),
    })),
    unmatched: {
      operation_allowlist: summary?.unmatched.allowlist ?? [],
      grade_overrides: overrides,
    },
    snapshot: {
      accepted_version: accepted?.version ?? null,
      latest_version: latest?.version ?? null,
      accepted_digest: accepted?.digest ?? null,
      latest_fetched_at: latest ? iso(latest.fetchedAt) : null,
      pending: pending
        ? {
            version: pending.version,
            fetched_at: iso(pending.fetchedAt),
            digest: pending.digest,
            changes: operationChanges(accepted?.operations ?? null, pending.operations),
          }
        : null,
    },
  };
}
