import { valueNestsDeeperThan } from '../../infra/json-nesting.js';
import { MCP_TOOL_NAME, type McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';

/**
 * What a snapshot of a remote MCP server's tools may hold. A server is whatever its
 * operator runs, so its listing is bounded before anything keeps it: the snapshot is stored,
 * shown whole by the app's GET and read by every call to the app.
 */
export const SNAPSHOT_LIMITS = {
  /** Real servers list tens; hundreds would drown any agent's context anyway. */
  tools: 500,
  /** One tool as JSON (name, title, description, input schema, annotations). */
  toolBytes: 64 * 1024,
  /** The whole snapshot as JSON. */
  snapshotBytes: 2 * 1024 * 1024,
  /**
   * How deep one tool's JSON may nest: real input schemas nest a few levels; deeper ones would
   * overflow the stack of what measures, stores and compiles them.
   */
  toolDepth: 64,
} as const;

/** A lone UTF-16 surrogate: no Unicode text holds one. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The first string (or key) Postgres could not store as it is: NUL, or a lone surrogate. */
function unstorableText(value: unknown): boolean {
  const stack: unknown[] = [value];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item === 'string') {
      if (item.includes('\u0000') || LONE_SURROGATE.test(item)) return true;
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    for (const [key, child] of Object.entries(item)) {
      if (key.includes('\u0000') || LONE_SURROGATE.test(key)) return true;
      stack.push(child);
    }
  }
  return false;
}

/** A name as a message may quote it: cut, since it may be anything a server sent. */
function quoted(name: string): string {
  const cut = Array.from(name).slice(0, 60).join('');
  return JSON.stringify(cut.length < name.length ? `${cut}…` : cut);
}

/**
 * Why these tools cannot be kept as a snapshot, or null when they can. Refused whole rather
 * than trimmed: a snapshot that silently dropped a tool would not be what the server serves.
 * Whether their input schemas compile is the costly check, made apart: toolSchemasProblem
 * (tool-input.ts), off the event loop.
 */
export function snapshotProblem(tools: readonly McpToolDefinition[]): string | null {
  if (tools.length > SNAPSHOT_LIMITS.tools) {
    return `lists more than ${String(SNAPSHOT_LIMITS.tools)} tools`;
  }
  const names = new Set<string>();
  let total = 0;
  for (const [index, tool] of tools.entries()) {
    if (!MCP_TOOL_NAME.test(tool.name)) {
      return `lists a tool (number ${String(index + 1)}) named ${quoted(tool.name)}: tool names are 1–128 letters, digits, "_", "-" or "."`;
    }
    if (names.has(tool.name)) return `lists the tool "${tool.name}" twice`;
    names.add(tool.name);
    if (valueNestsDeeperThan(tool, SNAPSHOT_LIMITS.toolDepth)) {
      return `describes the tool "${tool.name}" in JSON that nests deeper than ${String(SNAPSHOT_LIMITS.toolDepth)} levels`;
    }
    const bytes = Buffer.byteLength(JSON.stringify(tool));
    if (bytes > SNAPSHOT_LIMITS.toolBytes) {
      return `describes the tool "${tool.name}" in more than ${String(SNAPSHOT_LIMITS.toolBytes)} bytes`;
    }
    total += bytes;
    if (unstorableText(tool)) {
      return `describes the tool "${tool.name}" with a NUL character or malformed Unicode`;
    }
  }
  if (total > SNAPSHOT_LIMITS.snapshotBytes) {
    return `describes its tools in more than ${String(SNAPSHOT_LIMITS.snapshotBytes)} bytes`;
  }
  return null;
}
