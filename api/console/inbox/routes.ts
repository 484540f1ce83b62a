import { Router, type Response } from 'express';
import { z } from 'zod';
import { recordConsoleChange } from '../../../activities/audit/console-changes.js';
import { listInbox } from '../../../activities/db/approval-inbox.js';
import { noticesOf } from '../../../activities/db/approval-notifications.js';
import { agentKeyOwners, findApproval } from '../../../activities/db/approvals.js';
import { deciderIdentity } from '../../../workflows/decider-rules.js';
import type { ApiDeps } from '../../deps.js';
import {
  decideApproval,
  decisionRefusal,
  maxGrantSeconds,
  presentApproval,
} from '../../approvals/decide.js';
import { approvalNotice } from '../../approvals/approval-notices.js';
import { grantFromForm } from '../../approvals/pages/grant-choice.js';
import {
  ConflictError,
  InsufficientAccessError,
  InvalidRequestError,
  ServiceUnavailableError,
} from '../../errors.js';
import { encodeCursor } from '../../http/id-cursor.js';
import { callWorkflowsFor } from '../../temporal/call-workflows.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf, formOf, type ConsoleContext } from '../context.js';
import { cursorField, filterField, readFilters } from '../filters.js';
import { renderNotice } from '../pages/layout.js';
import { sendConsolePage } from '../respond.js';
import { renderInbox } from './list-page.js';
import { personDecider } from '../../people/person-decider.js';
import { renderReview } from './review-page.js';

const PAGE_SIZE = 25;

const inboxQuery = z.strictObject({
  agent: filterField,
  user: filterField,
  app: filterField,
  action: filterField,
  cursor: cursorField,
});

const approvalId = z.uuid();

/**
 * The inbox: the held calls that ask this person, and the review of one with Approve / Reject,
 * which decides through the same path as every other decision (api/approvals/decide.ts) as the
 * person signed in, and records the decision in the audit trail as theirs.
 */
export function inboxPages(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);

  router.get('/inbox', requireRole('decide'), async (req, res) => {
    const context = consoleContextOf(res);
    const { session } = context.viewer;
    const query = readFilters(inboxQuery, req.query);
    const filters = query ?? {};
    const rows = await listInbox(
      deps.sql,
      context.environment.id,
      { email: session.email, groups: session.groups },
      {
        ...(filters.agent ? { agentId: filters.agent } : {}),
        ...(filters.user ? { userExternalId: filters.user } : {}),
        ...(filters.app ? { app: filters.app } : {}),
        ...(filters.action ? { action: filters.action } : {}),
        ...(filters.cursor ? { before: filters.cursor } : {}),
      },
      PAGE_SIZE + 1,
    );
    const shown = rows.slice(0, PAGE_SIZE);
    const last = shown.at(-1);
    const me = deciderIdentity(personDecider(session, 'console'));
    sendConsolePage(
      res,
      query ? 200 : 400,
      renderInbox({
        branding: context.branding,
        viewer: context.shown,
        rows: shown.map((approval) => ({
          approval: presentApproval(approval),
          mine: approval.decisions.find((d) => d.identity === me)?.decision ?? null,
        })),
        filters: {
          agent: filters.agent,
          user: filters.user,
          app: filters.app,
          action: filters.action,
        },
        next: rows.length > PAGE_SIZE && last ? encodeCursor(last.id) : null,
        ...(query ? {} : { problem: 'That filter could not be read; showing everything.' }),
      }),
    );
  });

  async function review(
    res: Response,
    context: ConsoleContext,
    id: string,
    notice?: { good: boolean; text: string },
    status = 200,
  ): Promise<void> {
    const approval = await findApproval(deps.sql, context.environment.id, id);
    if (!approval) {
      sendConsolePage(
        res,
        404,
        renderNotice({
          branding: context.branding,
          viewer: context.shown,
          title: 'No such approval',
          message: 'This environment has no approval with that id.',
          action: { href: `${context.shown.base}/inbox`, label: 'To the inbox' },
        }),
      );
      return;
    }
    const owners = await agentKeyOwners(deps.sql, approval.environmentId, approval.agentId);
    const refusal = decisionRefusal(
      approval,
      personDecider(context.viewer.session, 'console'),
      undefined,
      owners,
    );
    const [maxGrant, notices] = await Promise.all([
      maxGrantSeconds(deps.sql, approval.environmentId, approval.agentId),
      noticesOf(deps.sql, approval.id),
    ]);
    sendConsolePage(
      res,
      status,
      renderReview({
        branding: context.branding,
        viewer: context.shown,
        approval: presentApproval(approval),
        refusal,
        maxGrantSeconds: maxGrant.seconds,
        notices: notices.map(approvalNotice),
        ...(notice ? { notice } : {}),
      }),
    );
  }

  router.get('/inbox/:id', requireRole('decide'), async (req, res) => {
    const context = consoleContextOf(res);
    const id = approvalId.safeParse(req.params.id);
    await review(res, context, id.success ? id.data : '00000000-0000-0000-0000-000000000000');
  });

  router.post('/inbox/:id', requireRole('decide'), async (req, res) => {
    const context = consoleContextOf(res);
    const parsed = approvalId.safeParse(req.params.id);
    const id = parsed.success ? parsed.data : '00000000-0000-0000-0000-000000000000';
    const form = formOf(req);
    const decision = form.decision;
    const grant = decision === 'approve' ? grantFromForm(form) : null;
    if ((decision !== 'approve' && decision !== 'reject') || grant === 'invalid') {
      await review(
        res,
        context,
        id,
        { good: false, text: 'That decision could not be read.' },
        400,
      );
      return;
    }
    const { session } = context.viewer;
    try {
      const decided = await decideApproval(deps.sql, calls, {
        environmentId: context.environment.id,
        approvalId: id,
        decision,
        decider: personDecider(session, 'console'),
        ...(grant ? { grant } : {}),
      });
      await recordConsoleChange(deps.sql, {
        environmentId: context.environment.id,
        actor: session,
        action: 'console.approvals.decide',
        target: { approval_id: id, decision, ...(grant ? { grant } : {}), status: decided.status },
        traceId: res.locals.traceId,
      });
      req.log.info(
        { approvalId: id, decision, status: decided.status, personId: session.personId },
        'approval decided in the console',
      );
      const needed = decided.approvals_needed ?? 0;
      const text =
        decided.status === 'pending'
          ? `Your approval is recorded; ${needed === 1 ? '1 more approval is' : `${String(needed)} more approvals are`} needed before the call runs.`
          : decided.status === 'approved'
            ? 'Approved: the agent’s next identical call runs once.'
            : 'Rejected: the call does not run.';
      await review(res, context, id, { good: true, text });
    } catch (error) {
      if (error instanceof InsufficientAccessError) {
        await review(res, context, id, { good: false, text: error.message }, 403);
        return;
      }
      if (error instanceof InvalidRequestError || error instanceof ConflictError) {
        await review(res, context, id, { good: false, text: error.message }, error.status);
        return;
      }
      if (error instanceof ServiceUnavailableError) {
        res.set(error.headers);
        await review(res, context, id, { good: false, text: error.message }, 503);
        return;
      }
      throw error;
    }
  });

  return router;
}
