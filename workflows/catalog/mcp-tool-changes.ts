/**
 * What a remote MCP server changed in its tools since the snapshot an operator accepted (issue
 * 21): the pinning rule's evidence, shown by the app's GET and kept in the audit log. Pure.
 */
import type { McpToolDefinition } from './mcp-tools.js';

/** The parts of a tool an agent reads and is governed by; any change makes it a changed tool. */
export type ToolField = 'title' | 'description' | 'input_schema' | 'annotations';

export interface ToolChanges {
  /** Listed now, not in the accepted snapshot. */
  added: string[];
  /** In the accepted snapshot, not listed now. */
  removed: string[];
  changed: { tool: string; fields: ToolField[] }[];
}

/** Key order does not matter in JSON objects; array order does. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  }
  const left = Object.entries(a).filter(([, value]) => value !== undefined);
  const right = new Map(Object.entries(b).filter(([, value]) => value !== undefined));
  return (
    left.length === right.size &&
    left.every(([key, value]) => right.has(key) && sameJson(value, right.get(key)))
  );
}

/** Which of a tool's governed parts differ between two definitions of it. */
export function changedFields(before: McpToolDefinition, after: McpToolDefinition): ToolField[] {
  const fields: ToolField[] = [];
  if ((before.title ?? null) !== (after.title ?? null)) fields.push('title');
  if ((before.description ?? null) !== (after.description ?? null)) fields.push('description');
  if (!sameJson(before.inputSchema, after.inputSchema)) fields.push('input_schema');
  if (!sameJson(before.annotations ?? {}, after.annotations ?? {})) fields.push('annotations');
  return fields;
}

/** `accepted` null: nothing accepted yet, so every tool listed is new. */
export function toolChanges(
  accepted: readonly McpToolDefinition[] | null,
  latest: readonly McpToolDefinition[],
): ToolChanges {
  const before = new Map((accepted ?? []).map((tool) => [tool.name, tool]));
  const after = new Map(latest.map((tool) => [tool.name, tool]));
  const changes: ToolChanges = { added: [], removed: [], changed: [] };
  for (const tool of latest) {
    const old = before.get(tool.name);
    if (!old) {
      changes.added.push(tool.name);
      continue;
    }
    const fields = changedFields(old, tool);
    if (fields.length > 0) changes.changed.push({ tool: tool.name, fields });
  }
  for (const tool of accepted ?? []) {
    if (!after.has(tool.name)) changes.removed.push(tool.name);
  }
  return changes;
}

export function hasChanges(changes: ToolChanges): boolean {
  return changes.added.length + changes.removed.length + changes.changed.length > 0;
}

const FIELD_WORDS: Record<ToolField, string> = {
  title: 'title',
  description: 'description',
  input_schema: 'input schema',
  annotations: 'annotations',
};

export function fieldsInWords(fields: readonly ToolField[]): string {
  return fields.map((field) => FIELD_WORDS[field]).join(', ');
}

/** One line for audit reasons and messages: `added a, b; removed c; changed d (description)`. */
export function changesInWords(changes: ToolChanges): string {
  const parts: string[] = [];
  if (changes.added.length > 0) parts.push(`added ${changes.added.join(', ')}`);
  if (changes.removed.length > 0) parts.push(`removed ${changes.removed.join(', ')}`);
  if (changes.changed.length > 0) {
    const each = changes.changed.map(({ tool, fields }) => `${tool} (${fieldsInWords(fields)})`);
    parts.push(`changed ${each.join(', ')}`);
  }
  return parts.length > 0 ? parts.join('; ') : 'no changes';
}
