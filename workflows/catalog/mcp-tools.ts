/**
 * The tools of a remote MCP server registered as an app, as its `tools/list` describes
 * them, and the grade each is governed at. Pure: the API, the workflows and the activities share it.
 */
import type { CallScope } from './types.js';

/** MCP tool annotations (2025-11-25): hints from the server, not guarantees. */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool as a snapshot keeps it: what an operator accepts, and what calls are checked against. */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description?: string;
  /** The tool's JSON Schema for its arguments (an object schema). */
  inputSchema: Record<string, unknown>;
  annotations?: McpToolAnnotations;
  /**
   * Kept only for a tool the server may run as a task (MCP tasks, `execution.taskSupport`
   * `optional` or `required`): such a tool is called task-augmented. Not a governed part of the
   * tool: a change of it alone does not wait for an operator (activities/mcp-apps/README.md).
   */
  execution?: { taskSupport: 'optional' | 'required' };
}

/**
 * What a tool may be named (MCP 2025-11-25, "Tool names"): 1–128 of these characters. A server
 * listing another name is refused at registration, so every stored name fits an action id
 * (`<app>.<tool>`) and a URL path segment without escaping.
 */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Where a tool's grade comes from: the operator's override, the server's own annotations, or
 * the default for a tool that says nothing (`destructive`, the strictest: MCP's default for a
 * tool without hints is that it may destroy). Only `annotations` is the server's word, which
 * counts once an operator has seen it or the app trusts the server's annotations.
 */
export type GradeSource = 'override' | 'annotations' | 'default';

/**
 * The grade a tool is governed at, and its source: the operator's override, else
 * `readOnlyHint: true` → read, else `destructiveHint: false` → write, else destructive.
 */
export function gradeOf(
  tool: Pick<McpToolDefinition, 'name' | 'annotations'>,
  overrides: Readonly<Record<string, CallScope>>,
): { grade: CallScope; source: GradeSource } {
  // Own keys only: a tool named `constructor` or `__proto__` must not find Object's members.
  const override = Object.hasOwn(overrides, tool.name) ? overrides[tool.name] : undefined;
  if (override) return { grade: override, source: 'override' };
  if (tool.annotations?.readOnlyHint === true) return { grade: 'read', source: 'annotations' };
  if (tool.annotations?.destructiveHint === false) return { grade: 'write', source: 'annotations' };
  return { grade: 'destructive', source: 'default' };
}

export function toolGrade(
  tool: Pick<McpToolDefinition, 'name' | 'annotations'>,
  overrides: Readonly<Record<string, CallScope>>,
): CallScope {
  return gradeOf(tool, overrides).grade;
}
