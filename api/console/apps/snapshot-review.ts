import type { McpAppStanding } from '../../../activities/db/mcp-apps.js';
import { gradedByHints } from '../../../activities/mcp-apps/registry.js';
import type { CallScope } from '../../../workflows/catalog/index.js';
import {
  changedFields,
  type ToolChanges,
  type ToolField,
} from '../../../workflows/catalog/mcp-tool-changes.js';
import {
  gradeOf,
  type GradeSource,
  type McpToolDefinition,
} from '../../../workflows/catalog/mcp-tools.js';
import { presentMcpApp } from '../../presenters/mcp-apps.js';

/** A tool as one snapshot defines it, with the grade it would be governed at from that snapshot. */
export interface ToolSide {
  definition: McpToolDefinition;
  grade: CallScope;
  source: GradeSource;
}

/** One tool the pending snapshot adds, changes or removes, both sides of it. */
export interface ToolReview {
  name: string;
  kind: 'added' | 'changed' | 'removed';
  /** The governed parts that differ (changed tools only; an added or removed tool differs whole). */
  fields: ToolField[];
  /** The accepted snapshot's definition; null for an added tool. */
  before: ToolSide | null;
  /** The pending snapshot's definition; null for a removed tool. */
  after: ToolSide | null;
}

export interface SnapshotReview {
  version: number;
  fetchedAt: string;
  acceptedVersion: number | null;
  changes: ToolChanges;
  tools: ToolReview[];
  /**
   * Tools the snapshot adds, or whose annotations it changes, graded by those annotations alone
   * (`name (grade)`): accepting the snapshot takes the server's word for them.
   */
  hinted: string[];
}

/**
 * What the person accepting a snapshot must see: each tool it adds, changes or removes, with the
 * accepted and the pending definition and grade side by side. The pending snapshot is the one the
 * management API shows (`snapshot.pending` of the app), so a listing that changed and changed back
 * leaves nothing to review here either. Null when nothing is pending.
 */
export function snapshotReview(standing: McpAppStanding): SnapshotReview | null {
  const pending = presentMcpApp(standing).snapshot.pending;
  const latest = standing.latest;
  if (!pending || !latest || latest.version !== pending.version) return null;
  const overrides = standing.app.gradeOverrides;
  const side = (definition: McpToolDefinition | undefined): ToolSide | null =>
    definition ? { definition, ...gradeOf(definition, overrides) } : null;
  const before = new Map((standing.accepted?.tools ?? []).map((tool) => [tool.name, tool]));
  const after = new Map(latest.tools.map((tool) => [tool.name, tool]));
  const { added, changed, removed } = pending.changes;
  const tools: ToolReview[] = [
    ...changed.map(({ tool }): ToolReview => {
      const old = before.get(tool);
      const now = after.get(tool);
      return {
        name: tool,
        kind: 'changed',
        fields: old && now ? changedFields(old, now) : [],
        before: side(old),
        after: side(now),
      };
    }),
    ...added.map((tool): ToolReview => ({
      name: tool,
      kind: 'added',
      fields: [],
      before: null,
      after: side(after.get(tool)),
    })),
    ...removed.map((tool): ToolReview => ({
      name: tool,
      kind: 'removed',
      fields: [],
      before: side(before.get(tool)),
      after: null,
    })),
  ];
  // The server's word is new where a tool is new, or its annotations changed; hints of the
  // accepted snapshot were seen when it was accepted.
  const newlyHinted = new Set(
    tools
      .filter((tool) => tool.kind === 'added' || tool.fields.includes('annotations'))
      .map((tool) => tool.name),
  );
  return {
    version: pending.version,
    fetchedAt: pending.fetched_at,
    acceptedVersion: standing.app.acceptedVersion,
    changes: pending.changes,
    tools,
    hinted: gradedByHints(
      latest.tools.filter((tool) => newlyHinted.has(tool.name)),
      standing.app,
    ),
  };
}
