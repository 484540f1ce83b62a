import type { TaskEnding } from '../db/mcp-tasks.js';
import type { McpTaskAnswer } from '../../workflows/mcp-task-types.js';

/**
 * How an ended task reads: `completed` when the app did what was asked, else `failed` (for tool
 * calls the protocol counts a result with `isError` as failed), with the reason in words. Never a
 * decision link: a task's status reaches the agent.
 */
export function taskEnding(answer: McpTaskAnswer): TaskEnding {
  if (answer.kind === 'approval_ended') {
    const why =
      answer.status === 'expired'
        ? `was not decided before it expired at ${answer.at}`
        : 'was cancelled (its user was deleted)';
    return {
      status: 'failed',
      statusMessage: `Approval ${answer.approvalId} ${why}; the call did not run.`,
      answer,
    };
  }
  if (answer.kind === 'withdrawn') {
    return {
      status: 'cancelled',
      statusMessage: `Cancelled by the agent: approval ${answer.approvalId} was withdrawn before anyone decided it; the call did not run.`,
      answer,
    };
  }
  if (answer.kind === 'tool_result') {
    const { result } = answer;
    const first = result.content[0];
    const said = first?.type === 'text' && result.content.length > 1 ? first.text : null;
    return result.isError === true
      ? { status: 'failed', statusMessage: said ?? 'The call did not do what was asked.', answer }
      : {
          status: 'completed',
          statusMessage: 'The call ran; its result is the app’s answer.',
          answer,
        };
  }
  const call = answer.answer;
  if (call.kind === 'json') {
    const body = call.body as { ok?: unknown; upstream_status?: unknown } | null;
    if (body?.ok === true) {
      return {
        status: 'completed',
        statusMessage: 'The call ran; its result is the app’s answer.',
        answer,
      };
    }
    const status =
      typeof body?.upstream_status === 'number' ? ` (status ${String(body.upstream_status)})` : '';
    return {
      status: 'failed',
      statusMessage: `The call ran; the app answered with a failure${status}.`,
      answer,
    };
  }
  if (call.kind === 'passthrough') {
    // Tools are actions, which answer JSON; only the proxy passes bytes through.
    return { status: 'failed', statusMessage: 'The call answered like a proxy call.', answer };
  }
  return { status: 'failed', statusMessage: `${call.message} (${call.code})`, answer };
}
