import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { AnsweredElsewhere, CallAnswer } from '../../workflows/call-types.js';

/** How long an earlier run's answer is waited for: that run has closed, so it is there or not. */
const LOOKUP_MS = 5000;

/** The call workflow run whose (local) activity this is. */
export function currentRun(): { workflowId: string; runId: string } {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw new Error('a call activity runs for a workflow');
  return { workflowId: execution.workflowId, runId: execution.runId };
}

/**
 * A request this run was handed may already have an audit row, written by another run of
 * the same call (or by the API, `null`). Temporal keeps every Update's outcome with its run: if
 * that run answered this request, its answer is the request's answer, and this run gives it
 * again. If that run has no such Update, its row was written in a workflow task Temporal then
 * discarded (a local activity's effects outlive the task it ran in): nobody was given that
 * answer, and this run answers the request as any other. Other failures are thrown: the
 * activity tries again.
 */
async function earlierAnswer(
  temporal: Client,
  workflowId: string,
  requestId: string,
  runId: string | null,
): Promise<CallAnswer | null> {
  if (runId === null) return null;
  const update = temporal.workflow
    .getHandle(workflowId)
    .getUpdateHandle<CallAnswer>(requestId, { workflowRunId: runId });
  try {
    return await temporal.withDeadline(Date.now() + LOOKUP_MS, () => update.result());
  } catch (error) {
    // Not found: no such Update in that run (or the run is past retention). Failed: that run
    // refused or aborted it, so its caller had no answer from there either.
    if (error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError) {
      return null;
    }
    throw error;
  }
}

/**
 * The answers earlier runs gave to these requests (by id, with the run that wrote each row), and
 * the requests whose rows no caller was ever answered with.
 */
export async function earlierAnswers(
  temporal: Client,
  workflowId: string,
  rows: ReadonlyMap<string, string | null>,
): Promise<{ answered: AnsweredElsewhere; unanswered: string[] }> {
  const answered: AnsweredElsewhere = {};
  const unanswered: string[] = [];
  for (const [requestId, runId] of rows) {
    const answer = await earlierAnswer(temporal, workflowId, requestId, runId);
    if (answer) answered[requestId] = answer;
    else unanswered.push(requestId);
  }
  return { answered, unanswered };
}
