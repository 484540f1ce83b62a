import type { ActivityDeps } from '../deps.js';
import { claimTaskActivity } from './claim-task.js';
import { endTaskActivity } from './end-task.js';
import { runTaskCallActivity } from './run-task-call.js';

/** The activities of the workflow behind an MCP task (workflows/mcp-task.ts). */
export function mcpTaskActivities(deps: ActivityDeps) {
  return {
    claimTask: claimTaskActivity(deps),
    runTaskCall: runTaskCallActivity(deps),
    endTask: endTaskActivity(deps),
  };
}
