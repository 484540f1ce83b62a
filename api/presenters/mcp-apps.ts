import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpAppStanding } from '../../activities/db/mcp-apps.js';
import { toolStanding } from '../../activities/mcp-apps/tool-standing.js';
import { hasChanges, toolChanges } from '../../workflows/catalog/mcp-tool-changes.js';
import { gradeOf, type McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import { iso, optionalTimestamp, timestamp } from './timestamps.js';

const grade = z.enum(['read', 'write', 'destructive']);

const annotationsSchema = z
  .object({
    title: z.string().optional(),
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .nullable()
  .meta({ description: "The server's hints, as it listed them; null when it gave none" });

/** A tool in short, as every key that reads apps may see it. */
const toolSummarySchema = z.object({
  name: z.string().meta({ description: "The server's own name for the tool" }),
  action: z.string().meta({ description: '`<app>.<tool>`, as `/v1/actions/{action}/run` takes' }),
  title: z.string().nullable(),
  description: z.string().nullable(),
  grade: grade.meta({ description: 'What the policy governs it at' }),
  callable: z.boolean().meta({
    description:
      'Whether a call may run now: false outside the allow-list, or while the server lists it changed or removed since the accepted snapshot',
  }),
  refused_because: z
    .string()
    .nullable()
    .meta({ description: 'Why calls are refused (`denied_by_policy`), when they are' }),
});

const changesSchema = z
  .object({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(
      z.object({
        tool: z.string(),
        fields: z.array(z.enum(['title', 'description', 'input_schema', 'annotations'])),
      }),
    ),
  })
  .meta({ description: "The newest listing against the accepted snapshot's tools" });

const snapshotStateSchema = z.object({
  accepted_version: z
    .int()
    .nullable()
    .meta({ description: 'The snapshot calls use; null until one is accepted' }),
  latest_version: z
    .int()
    .nullable()
    .meta({ description: 'The newest listing kept; null before the first' }),
  checked_at: optionalTimestamp.meta({ description: 'When `tools/list` last answered' }),
  pending: z
    .object({
      version: z.int(),
      fetched_at: timestamp,
      changes: changesSchema,
    })
    .nullable()
    .meta({
      description:
        'The newest snapshot when it is not the accepted one: what an operator reviews before accepting it',
    }),
});

/** `GET /v1/apps` and `GET /v1/apps/{app}` for a remote MCP server. */
export const remoteAppSchema = z
  .object({
    app: z.string().meta({ description: 'The app id, as `app` in connect links and actions' }),
    name: z.string(),
    auth_kind: z.literal('mcp').meta({ description: 'A remote MCP server registered as an app' }),
    server_url: z.url(),
    auth: z.enum(['none', 'oauth']).meta({
      description:
        '`oauth`: users connect through the hosted connect flow; `none`: the server asks for no authorization, and every user may call it without connecting',
    }),
    actions: z
      .array(z.object({ action: z.string(), scope: grade, description: z.string() }))
      .meta({ description: 'The tools callers can run now, as catalog actions are listed' }),
    tools: z.array(toolSummarySchema).meta({
      description:
        'Every tool of the accepted snapshot, and the pending snapshot’s new ones, with whether it may be called',
    }),
    snapshot: snapshotStateSchema,
  })
  .meta({ id: 'RemoteMcpApp' });

/** The management view: everything above, the settings, and each tool's definition in full. */
export const mcpAppSchema = remoteAppSchema
  .omit({ tools: true })
  .extend({
    tool_allowlist: z
      .array(z.string())
      .nullable()
      .meta({ description: 'Only these tools become actions; null: every tool' }),
    grade_overrides: z.record(z.string(), grade).meta({
      description: 'Tool name → grade, over what its annotations say',
    }),
    tools: z.array(
      toolSummarySchema.extend({
        grade_source: z.enum(['override', 'annotations', 'default']).meta({
          description:
            "Where the grade comes from: the operator's `override`, the server's own `annotations` (which count once an operator accepted the snapshot that shows them, or the app was registered with `trust_annotations`), or the `default` for a tool without hints (destructive)",
        }),
        annotations: annotationsSchema,
        input_schema: z.record(z.string(), z.unknown()),
      }),
    ),
    protocol_version: z
      .string()
      .nullable()
      .meta({
        description: `The MCP protocol revision the server negotiated (the \`protocolVersion\` its \`initialize\` answered) when Gatehouse last listed its tools; null until a listing answered (for a server that asks for authorization, the first refresh after a user connected). Gatehouse offers ${LATEST_PROTOCOL_VERSION} and accepts ${SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version !== LATEST_PROTOCOL_VERSION).join(', ')}`,
        example: LATEST_PROTOCOL_VERSION,
      }),
    pending_tools: z
      .array(
        z.object({
          name: z.string(),
          title: z.string().nullable(),
          description: z.string().nullable(),
          annotations: annotationsSchema,
          input_schema: z.record(z.string(), z.unknown()),
        }),
      )
      .meta({
        description:
          "The pending snapshot's definitions of the tools it adds or changes: what accepting it would let agents call",
      }),
    created_at: timestamp,
    updated_at: timestamp,
    updated_by: z.string().meta({ description: 'The agent (or `cli`) that last changed it' }),
  })
  .meta({ id: 'McpApp' });

export type RemoteAppView = z.infer<typeof remoteAppSchema>;
export type McpAppView = z.infer<typeof mcpAppSchema>;

/** The accepted snapshot's tools, then the pending snapshot's new ones. */
function toolsOf(standing: McpAppStanding): McpToolDefinition[] {
  const accepted = standing.accepted?.tools ?? [];
  const names = new Set(accepted.map((tool) => tool.name));
  const added = (standing.latest?.tools ?? []).filter((tool) => !names.has(tool.name));
  return [...accepted, ...added];
}

function summaryOf(standing: McpAppStanding, tool: McpToolDefinition) {
  const judged = toolStanding(standing, tool.name);
  return {
    name: tool.name,
    action: `${standing.app.id}.${tool.name}`,
    title: tool.title ?? null,
    description: tool.description ?? null,
    grade: judged?.grade ?? 'destructive',
    callable: judged?.callable ?? false,
    refused_because: judged && !judged.callable ? judged.reason : null,
  };
}

function snapshotState(standing: McpAppStanding): RemoteAppView['snapshot'] {
  const { app, accepted, latest } = standing;
  const newer = latest && latest.version !== accepted?.version ? latest : null;
  const changes = newer ? toolChanges(accepted?.tools ?? null, newer.tools) : null;
  // A newer listing with the accepted tools exactly (a server that changed and changed back)
  // leaves nothing to review.
  const pending =
    newer && changes && (hasChanges(changes) || accepted === null)
      ? { version: newer.version, fetched_at: iso(newer.fetchedAt), changes }
      : null;
  return {
    accepted_version: app.acceptedVersion,
    latest_version: latest?.version ?? null,
    checked_at: iso(app.toolsCheckedAt),
    pending,
  };
}

export function presentRemoteApp(standing: McpAppStanding): RemoteAppView {
  const tools = toolsOf(standing).map((tool) => summaryOf(standing, tool));
  return {
    app: standing.app.id,
    name: standing.app.name,
    auth_kind: 'mcp',
    server_url: standing.app.serverUrl,
    auth: standing.app.auth,
    actions: tools
      .filter((tool) => tool.callable)
      .map((tool) => ({
        action: tool.action,
        scope: tool.grade,
        description: tool.description ?? tool.title ?? tool.name,
      })),
    tools,
    snapshot: snapshotState(standing),
  };
}

function definitionOf(tool: McpToolDefinition) {
  return {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    annotations: tool.annotations ?? null,
    input_schema: tool.inputSchema,
  };
}

export function presentMcpApp(standing: McpAppStanding): McpAppView {
  const { app } = standing;
  const remote = presentRemoteApp(standing);
  const pending = remote.snapshot.pending;
  const reviewed = new Set([
    ...(pending?.changes.added ?? []),
    ...(pending?.changes.changed.map((change) => change.tool) ?? []),
  ]);
  return {
    ...remote,
    tool_allowlist: app.toolAllowlist,
    grade_overrides: app.gradeOverrides,
    protocol_version: app.protocolVersion,
    tools: toolsOf(standing).map((tool) => ({
      ...summaryOf(standing, tool),
      grade_source: gradeOf(tool, app.gradeOverrides).source,
      annotations: tool.annotations ?? null,
      input_schema: tool.inputSchema,
    })),
    pending_tools: (standing.latest?.tools ?? [])
      .filter((tool) => reviewed.has(tool.name))
      .map(definitionOf),
    created_at: iso(app.createdAt),
    updated_at: iso(app.updatedAt),
    updated_by: app.updatedBy,
  };
}
