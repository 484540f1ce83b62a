import type { McpAppStanding } from '../db/mcp-apps.js';
import { changedFields, fieldsInWords } from '../../workflows/catalog/mcp-tool-changes.js';
import { toolGrade, type McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import type { CallScope } from '../../workflows/catalog/index.js';

/**
 * Whether a tool of a remote MCP app may be called now, by the pinning rule: a tool
 * is trusted as of the snapshot an operator accepted, so it is callable only when it is in that
 * snapshot, inside the allow-list, and the server's newest listing still has it unchanged.
 * `tool` is the definition calls use (the accepted one), or, for a tool not accepted yet, the
 * newest listing's, for its name and grade; `grade` is what the policy governs it at.
 */
export type ToolStanding =
  | { callable: true; accepted: true; tool: McpToolDefinition; grade: CallScope }
  | {
      callable: false;
      /** Whether `tool` is the accepted definition (false: only the newest listing has it). */
      accepted: boolean;
      tool: McpToolDefinition;
      grade: CallScope;
      reason: string;
    };

function inAllowlist(standing: McpAppStanding, name: string): boolean {
  const allowlist = standing.app.toolAllowlist;
  return allowlist === null || allowlist.includes(name);
}

/**
 * The standing of `name` in the app, or null when neither the accepted snapshot nor the newest
 * listing has such a tool (an unknown action). Every refusal names the change, which an
 * operator ends by accepting a snapshot that has the tool as it is now.
 */
export function toolStanding(standing: McpAppStanding, name: string): ToolStanding | null {
  const { app, accepted, latest } = standing;
  const acceptedTool = accepted?.tools.find((tool) => tool.name === name);
  // When the newest listing is the accepted one, nothing is pending.
  const pending = latest && latest.version !== accepted?.version ? latest : null;
  const listedTool = pending ? pending.tools.find((tool) => tool.name === name) : acceptedTool;
  const tool = acceptedTool ?? listedTool;
  if (!tool) return null;
  const grade = toolGrade(tool, app.gradeOverrides);
  const refuse = (reason: string): ToolStanding => ({
    callable: false,
    accepted: acceptedTool !== undefined,
    tool,
    grade,
    reason,
  });
  const subject = `tool "${name}" of app "${app.id}"`;
  if (!inAllowlist(standing, name))
    return refuse(`${subject} is outside the app's tool allow-list`);
  if (!acceptedTool) {
    return refuse(
      accepted === null
        ? `${subject} is in snapshot v${String(pending?.version)}, which no operator has accepted yet (the app has no accepted snapshot)`
        : `${subject} is new in snapshot v${String(pending?.version)}, not in the accepted snapshot v${String(accepted.version)}; an operator must accept a snapshot that has it`,
    );
  }
  if (pending && accepted) {
    if (!listedTool) {
      return refuse(
        `${subject} was removed by the server in snapshot v${String(pending.version)}; the accepted snapshot v${String(accepted.version)} still has it, until an operator accepts a newer one`,
      );
    }
    const fields = changedFields(acceptedTool, listedTool);
    if (fields.length > 0) {
      return refuse(
        `${subject} changed its ${fieldsInWords(fields)} in snapshot v${String(pending.version)} since the accepted snapshot v${String(accepted.version)}; an operator must accept snapshot v${String(pending.version)} before it can be called`,
      );
    }
  }
  return { callable: true, accepted: true, tool: acceptedTool, grade };
}
