import type { Client } from '@temporalio/client';
import { auditEventWorkflowRun } from '../../../activities/db/audit-events.js';
import type { Config } from '../../../infra/config.js';
import type { Sql } from '../../../infra/database/client.js';
import type { Logger } from '../../../infra/logger.js';

/** How long an event's page waits for Temporal to name the workflow of a run. */
const LOOKUP_MS = 2000;

/** Temporal's run ids are UUIDs: nothing else is put into a visibility query. */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CallWorkflow {
  /** `call/<environment>/<action>/<fingerprint>`; null when Temporal could not name it. */
  workflowId: string | null;
  /** The run that wrote the event. */
  runId: string | null;
  /** The Temporal UI's page of that run (or a list finding it); null without TEMPORAL_UI_URL. */
  uiUrl: string | null;
}

/**
 * The call workflow behind an audit event. The event keeps the run that wrote it
 * (`workflow_run_id`), not the workflow's id, which holds the call's fingerprint: that comes from
 * the approval when the call was held (it records its workflow), else from Temporal's visibility,
 * asked by run id and bounded, so a slow Temporal costs the page two seconds at most and leaves a
 * link to the UI's list filtered by the run. Events the API wrote itself (a refused call) and
 * console changes have no workflow: null.
 */
export async function callWorkflowOf(
  deps: { sql: Sql; temporal: Client; config: Pick<Config, 'temporal'>; logger: Logger },
  event: { environmentId: string; id: string },
  approvalWorkflowId: string | null,
): Promise<CallWorkflow | null> {
  const runId = await auditEventWorkflowRun(deps.sql, event.environmentId, event.id);
  if (runId === null && approvalWorkflowId === null) return null;
  const workflowId =
    approvalWorkflowId ?? (runId === null ? null : await workflowOfRun(deps, runId));
  return { workflowId, runId, uiUrl: temporalUiUrl(deps.config, workflowId, runId) };
}

async function workflowOfRun(
  deps: { temporal: Client; logger: Logger },
  runId: string,
): Promise<string | null> {
  if (!RUN_ID.test(runId)) return null;
  try {
    return await deps.temporal.withDeadline(Date.now() + LOOKUP_MS, async () => {
      for await (const execution of deps.temporal.workflow.list({
        query: `RunId = "${runId}"`,
        pageSize: 1,
      })) {
        return execution.workflowId;
      }
      return null;
    });
  } catch (error) {
    deps.logger.warn({ err: error, runId }, 'the workflow of a call run could not be looked up');
    return null;
  }
}

/** The Temporal UI's page of the run, or its workflow list filtered down to it. */
export function temporalUiUrl(
  config: Pick<Config, 'temporal'>,
  workflowId: string | null,
  runId: string | null,
): string | null {
  const origin = config.temporal.uiOrigin;
  if (origin === null) return null;
  const namespace = `${origin}/namespaces/${encodeURIComponent(config.temporal.namespace)}`;
  if (workflowId !== null && runId !== null) {
    return `${namespace}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
  }
  const query = workflowId !== null ? `WorkflowId = "${workflowId}"` : `RunId = "${runId ?? ''}"`;
  return `${namespace}/workflows?query=${encodeURIComponent(query)}`;
}
