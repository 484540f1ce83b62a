import { z } from 'zod';
import { MCP_APP_ID } from '../../activities/apps/directory.js';
import { MAX_SERVER_URL_LENGTH } from '../../activities/mcp-apps/server-url.js';
import {
  ACTION_NAME,
  ACTION_NAME_MAX,
  IMPORT_LIMITS,
} from '../../activities/openapi-apps/index.js';

/**
 * The inputs of the OpenAPI app operations: the management API validates with them, its OpenAPI
 * document is made of them, and the command line checks its flags with them.
 */

const appId = z
  .string()
  .regex(
    MCP_APP_ID,
    'must be 1–40 lowercase letters, digits or "-", starting and ending with a letter or digit',
  )
  .meta({
    description:
      'A slug, unique in the environment, that no catalog app or remote MCP app has: `github`',
  });

const operationName = z
  .string()
  .max(ACTION_NAME_MAX)
  .regex(
    ACTION_NAME,
    'must be an operation name as the import gives it: lowercase letters, digits and single "_"',
  );

const grade = z.enum(['read', 'write', 'destructive']);

const operationAllowlist = z
  .array(operationName)
  .min(1)
  .max(IMPORT_LIMITS.operations)
  .refine((names) => new Set(names).size === names.length, {
    message: 'must not repeat an operation',
  })
  .nullable()
  .meta({
    description:
      'Only these operations become actions (names as the import gives them: `issues_create`); null or absent: every operation. Applied when the document is imported (an operation left out costs nothing) and to every call.',
  });

const gradeOverrides = z
  .record(operationName, grade)
  .refine((overrides) => Object.keys(overrides).length <= IMPORT_LIMITS.operations, {
    message: `must name at most ${String(IMPORT_LIMITS.operations)} operations`,
  })
  .meta({
    description:
      "Operation name → `read`, `write` or `destructive`, over the document's `x-gatehouse-scope` and the method's grade (GET read; POST, PUT, PATCH write; DELETE destructive). Replaced whole.",
  });

const name = z
  .string()
  .min(1)
  .max(100)
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

const authScheme = z
  .string()
  .min(1)
  .max(200)
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
  .nullable()
  .meta({
    description:
      "The name of the document's security scheme (under `components.securitySchemes`) that the app's users connect with: an OAuth 2.0 authorization-code flow, an API key, or HTTP bearer or basic. Null or absent: the supported scheme that alone serves the most operations. An operation that needs another scheme is not callable.",
  });

const url = (description: string) =>
  z.string().min(1).max(MAX_SERVER_URL_LENGTH).meta({ description });

const document = z.union([z.string().min(1), z.record(z.string(), z.unknown())]).meta({
  description:
    "The OpenAPI document (3.0, 3.1 or Swagger 2.0): a JSON object, or its text as JSON or YAML. Bounded by the API's body limit (BODY_LIMIT_BYTES); a larger document (GitHub's is 13 MB) is given by `document_url`.",
});

export const registerOpenApiAppBody = z
  .strictObject({
    id: appId,
    name,
    document: document.optional(),
    document_url: url(
      'Where to fetch the document once (and again at each refresh): https, or loopback and private addresses only with MCP_APPS_ALLOW_PRIVATE; no redirects followed; up to 32 MiB.',
    ).optional(),
    base_url: url(
      "Where calls go, over the document's servers: https (private addresses only with MCP_APPS_ALLOW_PRIVATE). Pinned: a refresh never moves it.",
    ).optional(),
    operation_allowlist: operationAllowlist.optional(),
    grade_overrides: gradeOverrides.optional(),
    trust_document_grades: z.boolean().optional().meta({
      description:
        "Trust the document's own `x-gatehouse-scope` grades: the first snapshot is accepted by the registration even where they grade an operation. Absent or false: such a snapshot waits for an operator to review each grade and where it came from, then accept it.",
    }),
    auth_scheme: authScheme.optional(),
  })
  .refine((body) => (body.document === undefined) !== (body.document_url === undefined), {
    message: 'give exactly one of document and document_url',
    path: ['document'],
  })
  .meta({ id: 'register_openapi_app_input' });

export const updateOpenApiAppBody = z
  .strictObject({
    name: name.optional(),
    base_url: url('The new pinned base URL, checked as at registration').optional(),
    operation_allowlist: operationAllowlist.optional(),
    grade_overrides: gradeOverrides.optional(),
    auth_scheme: authScheme.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'must change something' })
  .meta({ id: 'update_openapi_app_input', description: 'Only the fields given change.' });

export const refreshOpenApiAppBody = z.strictObject({ document: document.optional() }).meta({
  id: 'refresh_openapi_app_input',
  description: "Absent `document`: the document is fetched again from the app's `document_url`.",
});

export const acceptOpenApiAppBody = z
  .strictObject({
    version: z
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .meta({
        description:
          'The snapshot reviewed (`snapshot.pending.version`): named, so that an import made since the review is never accepted unseen',
      }),
  })
  .meta({ id: 'accept_openapi_app_snapshot_input' });

export const openApiAppPath = z.strictObject({
  app: z.string().min(1).max(100).meta({ description: 'The OpenAPI app id' }),
});

/** A document given as a JSON object is imported as its JSON text. */
export function documentText(value: string | Record<string, unknown>): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
