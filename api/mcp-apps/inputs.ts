import { z } from 'zod';
import { MCP_APP_ID } from '../../activities/apps/directory.js';
import { MAX_SERVER_URL_LENGTH } from '../../activities/mcp-apps/server-url.js';
import { SNAPSHOT_LIMITS } from '../../activities/mcp-apps/snapshot-limits.js';
import { MCP_TOOL_NAME } from '../../workflows/catalog/mcp-tools.js';
import { InvalidRequestError } from '../errors.js';

/**
 * The inputs of the remote MCP app operations: the management API validates with them, its OpenAPI
 * document is made of them, and the command line checks its flags with them.
 */

const appId = z
  .string()
  .regex(
    MCP_APP_ID,
    'must be 1–40 lowercase letters, digits or "-", starting and ending with a letter or digit',
  )
  .meta({
    description: 'A slug, unique in the environment, that no catalog app has: `linear-mcp`',
  });

const toolName = z
  .string()
  .regex(MCP_TOOL_NAME, 'must be a tool name: 1–128 letters, digits, "_", "-" or "."');

const grade = z.enum(['read', 'write', 'destructive']);

const toolAllowlist = z
  .array(toolName)
  .min(1)
  .max(SNAPSHOT_LIMITS.tools)
  .refine((names) => new Set(names).size === names.length, { message: 'must not repeat a tool' })
  .nullable()
  .meta({
    description:
      'Only these tools become actions (names as the server lists them); null or absent: every tool. Names are not checked against the listing: a server asking for authorization lists none before a user connects.',
  });

const gradeOverrides = z
  .record(toolName, grade)
  .refine((overrides) => Object.keys(overrides).length <= SNAPSHOT_LIMITS.tools, {
    message: `must name at most ${String(SNAPSHOT_LIMITS.tools)} tools`,
  })
  .meta({
    description:
      'Tool name → `read`, `write` or `destructive`, over the grade its annotations give (`readOnlyHint` → read, `destructiveHint: false` → write, else destructive). Replaced whole.',
  });

const name = z
  .string()
  .min(1)
  .max(100)
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters');

export const registerMcpAppBody = z
  .strictObject({
    id: appId,
    name,
    server_url: z.string().min(1).max(MAX_SERVER_URL_LENGTH).meta({
      description:
        'The Streamable HTTP endpoint, https (loopback and private addresses, and http on loopback, only with MCP_APPS_ALLOW_PRIVATE)',
      example: 'https://mcp.linear.app/mcp',
    }),
    tool_allowlist: toolAllowlist.optional(),
    grade_overrides: gradeOverrides.optional(),
    trust_annotations: z.boolean().optional().meta({
      description:
        "Trust the server's own annotations to grade its tools: the first snapshot is accepted by the registration even where `readOnlyHint` or `destructiveHint: false` make a tool a read or a write. Absent or false: such a snapshot waits for an operator to review each tool's grade and where it came from, then accept it (`POST /v1/mcp-apps/{app}/accept`). A server's hints are its own claims; a destructive tool may say it only reads.",
    }),
  })
  .meta({ id: 'register_mcp_app_input' });

export const updateMcpAppBody = z
  .strictObject({
    name: name.optional(),
    tool_allowlist: toolAllowlist.optional(),
    grade_overrides: gradeOverrides.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'must change something' })
  .meta({ id: 'update_mcp_app_input', description: 'Only the fields given change.' });

export const acceptMcpAppBody = z
  .strictObject({
    version: z
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .meta({
        description:
          'The snapshot reviewed (`snapshot.pending.version` of the app): named, so that a listing made since the review is never accepted unseen',
      }),
  })
  .meta({ id: 'accept_mcp_app_snapshot_input' });

export const appPath = z.strictObject({
  app: z.string().min(1).max(100).meta({ description: 'The MCP app id' }),
});

/** Zod drops a `__proto__` key of a record silently: refused, so no override vanishes unseen. */
export function refuseProtoOverride(body: unknown): void {
  const overrides = (body as { grade_overrides?: unknown } | null)?.grade_overrides;
  if (
    typeof overrides === 'object' &&
    overrides !== null &&
    Object.hasOwn(overrides, '__proto__')
  ) {
    throw new InvalidRequestError('Invalid request body (grade_overrides.__proto__).', [
      { path: 'grade_overrides.__proto__', message: 'cannot be stored as a tool name' },
    ]);
  }
}
