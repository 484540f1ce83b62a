import { Router } from 'express';
import { approvalView, findApproval } from '../../../activities/db/approvals.js';
import { findAuditEvent, listAuditEvents } from '../../../activities/db/audit-events.js';
import type { ApiDeps } from '../../deps.js';
import { page } from '../../http/id-cursor.js';
import { uuidString } from '../../http/ids.js';
import { traceUrl } from '../../temporal/call-links.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf } from '../context.js';
import { renderNotice } from '../pages/layout.js';
import { sendConsolePage } from '../respond.js';
import { formFieldsOf, readCallsQuery } from './call-filters.js';
import { callWorkflowOf } from './call-workflow.js';
import { renderCallEvent } from './call-event-page.js';
import { renderCallsList } from './calls-list-page.js';
import { TrailIntegrityChecks } from './trail-integrity.js';

/**
 * The Calls section (`/console/<environment>/calls`), for every role: the environment's audit
 * log with its filters and pages, the trail's integrity over the last day, and one event in full.
 * The list is the API's own query (`listAuditEvents`, as `GET /v1/audit` reads it), with the
 * console's further filters.
 */
export function callsPages(deps: ApiDeps): Router {
  const router = Router();
  const checks = new TrailIntegrityChecks(deps.sql, deps.logger);

  router.get('/calls', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const raw = req.query as Record<string, unknown>;
    const read = readCallsQuery(raw);
    const integrity = await checks.status(context.environment.id);
    const form = formFieldsOf(raw);
    if (!read.ok) {
      sendConsolePage(
        res,
        400,
        renderCallsList({
          context,
          integrity,
          form,
          problems: read.problems,
          events: [],
          next: null,
          paged: false,
        }),
      );
      return;
    }
    const rows = await listAuditEvents(deps.sql, context.environment.id, read.filter);
    const { items, cursor } = page(rows, read.filter.limit);
    sendConsolePage(
      res,
      200,
      renderCallsList({
        context,
        integrity,
        form,
        problems: [],
        events: items,
        next: cursor,
        paged: read.filter.before !== undefined,
      }),
    );
  });

  // Reading, not changing: anyone who may read the list may ask for a fresh check. A form (with
  // the console's token), not a link, so that no prefetch starts one.
  router.post('/calls/integrity-check', requireRole('read'), async (_req, res) => {
    const context = consoleContextOf(res);
    await checks.checkAgain(context.environment.id);
    res.redirect(303, `${context.shown.base}/calls`);
  });

  router.get('/calls/:eventId', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const id = uuidString().safeParse(req.params.eventId);
    const event = id.success
      ? await findAuditEvent(deps.sql, context.environment.id, id.data)
      : null;
    if (!event) {
      sendConsolePage(
        res,
        404,
        renderNotice({
          branding: context.branding,
          viewer: context.shown,
          title: 'No such event',
          message: 'This environment’s audit log has no event with that id.',
          action: { href: `${context.shown.base}/calls`, label: 'All calls' },
        }),
      );
      return;
    }
    const approval = event.approvalId
      ? await findApproval(deps.sql, context.environment.id, event.approvalId)
      : null;
    const workflow = await callWorkflowOf(deps, event, approval?.workflowId ?? null);
    const template = deps.config.observability.traceUrlTemplate;
    sendConsolePage(
      res,
      200,
      renderCallEvent({
        context,
        event,
        approval: approval ? approvalView(approval) : null,
        workflow,
        traceUrl: template === null ? null : traceUrl(template, event.traceId),
      }),
    );
  });

  return router;
}
