import type { ActionCall } from '../../workflows/call-types.js';
import type { McpAppStanding } from '../db/mcp-apps.js';
import { ToolSchemaUnusable, toolInputIssues } from './tool-input.js';
import { toolStanding } from './tool-standing.js';

/**
 * Why a call to a remote MCP tool may not run as the operator accepted it, or null when it may.
 * Checked where every call is prepared, so it holds both when a call is made and when
 * a held call runs after its approval: the app must still be registered, the tool callable
 * (tool-standing.ts), graded as when the call was made (the grade is what the policy decided
 * on), and the input must fit the accepted input schema (calls use the accepted definition).
 */
export async function pinningRefusal(
  standing: McpAppStanding | null,
  target: ActionCall,
): Promise<string | null> {
  const name = target.action.slice(target.app.length + 1);
  if (!standing) {
    return `app "${target.app}" is not registered in this environment (any more): its tools cannot be called`;
  }
  const judged = toolStanding(standing, name);
  if (!judged) return `tool "${name}" of app "${target.app}" is in no snapshot of the app`;
  if (!judged.callable) return judged.reason;
  if (judged.grade !== target.scope) {
    return `tool "${name}" of app "${target.app}" is graded ${judged.grade} now, not ${target.scope} as when the call was made; make the call again`;
  }
  let issues;
  try {
    issues = await toolInputIssues(judged.tool.inputSchema, target.input);
  } catch (error) {
    // Only the schema's own fault denies the call; a failure of ours is retried with the step.
    if (!(error instanceof ToolSchemaUnusable)) throw error;
    return `the accepted input schema of tool "${name}" cannot check input: ${error.message}`;
  }
  const [first] = issues;
  return first
    ? `the input no longer fits the accepted input schema of tool "${name}" (${first.path}: ${first.message}); make the call again`
    : null;
}
