import type { ActivityDeps } from '../deps.js';
import { endTaskActivity } from './end-task.js';
import { runTaskCallActivity } from './run-task-call.js';

/** The activities of the workflow behind an MCP task (workflows/mcp-task.ts). */
export function mcpTaskActivities(deps: ActivityDeps) {
  return {
    runTaskCall: runTaskCallActivity(deps),
    endTask: endTaskActivity(deps),
  };
}
