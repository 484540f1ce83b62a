import { settleMcpTask } from '../db/mcp-tasks.js';
import type { ActivityDeps } from '../deps.js';
import type { McpTaskAnswer } from '../../workflows/mcp-task-types.js';
import { taskEnding } from './task-ending.js';

/**
 * Records how the task ended, once, and tells every API process (its waiting `tasks/result`
 * requests answer). A task its agent cancelled meanwhile keeps that ending. Safe to run twice.
 */
export function endTaskActivity(deps: ActivityDeps) {
  return async function endTask(taskId: string, answer: McpTaskAnswer): Promise<void> {
    await settleMcpTask(deps.sql, deps.config.encryption, taskId, taskEnding(answer));
  };
}
