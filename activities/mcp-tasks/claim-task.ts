import { claimMcpTask } from '../db/mcp-tasks.js';
import type { ActivityDeps } from '../deps.js';

/**
 * The task workflow's first step: whether its task still exists, stamped as started. A start
 * that Temporal took after the API had given up on it finds the row deleted (the agent was told
 * to call again), and its workflow ends there without running the approved call.
 */
export function claimTaskActivity(deps: ActivityDeps) {
  return async function claimTask(taskId: string): Promise<boolean> {
    return claimMcpTask(deps.sql, taskId);
  };
}
