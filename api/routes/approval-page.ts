import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { formToken, formTokenMatches } from '../../activities/approvals/form-token.js';
import {
  APPROVAL_PAGE_PATH,
  LINK_CHOICE_PARAM,
  LINK_TOKEN_PATTERN,
  approvalLinkUrl,
  linkChoiceOf,
} from '../../activities/approvals/link-token.js';
import {
  findApprovalLink,
  markApprovalLinkUsed,
  type ApprovalLink,
} from '../../activities/db/approval-links.js';
import { agentKeyOwners, findApproval, type Approval } from '../../activities/db/approvals.js';
import { findEnvironmentById } from '../../activities/db/environments.js';
import type { ApiDeps } from '../deps.js';
import {
  decideApproval,
  decisionRefusal,
  maxGrantSeconds,
  presentApproval,
} from '../approvals/decide.js';
import { grantFromForm } from '../approvals/pages/grant-choice.js';
import {
  REVIEW_REFERRER_POLICY,
  notPendingProblem,
  renderApprovalProblem,
  renderDecidedPage,
  renderReviewPage,
  type ApprovalProblem,
} from '../approvals/pages/index.js';
import { brandingOf } from '../connect/link-check.js';
import { DEFAULT_BRANDING, type ConnectBranding } from '../connect/pages/index.js';
import { sendPage } from '../connect/respond.js';
import {
  ConflictError,
  InsufficientAccessError,
  InvalidRequestError,
  NotFoundError,
  ServiceUnavailableError,
  serviceUnavailableFrom,
} from '../errors.js';
import type { PageLimits } from '../http/rate-limit.js';
import { callWorkflowsFor } from '../temporal/call-workflows.js';
import { consoleViewer, viewerMay } from '../people/console-viewer.js';
import { linkAddressedTo, personDecider } from '../people/person-decider.js';
import type { Decider } from '../../workflows/decider-rules.js';

/** Who decides through a link that nobody signed in holds: the addressee it was made for. */
function linkDecider(link: ApprovalLink): Decider {
  return { kind: 'link', addressee: link.approver };
}

/** Who is deciding through this link, as the page shows and records them; or why not. */
type LinkHolder =
  | { decider: Decider; shownAs: string; refusal: null }
  | { decider: null; shownAs: string; refusal: string };

type Opened =
  | { link: ApprovalLink; approval: Approval; branding: ConnectBranding }
  | { problem: ApprovalProblem; branding: ConnectBranding };

function problemPage(
  res: Response,
  problem: ApprovalProblem,
  branding: ConnectBranding,
  context: Parameters<typeof renderApprovalProblem>[2] = {},
): void {
  const { status, page } = renderApprovalProblem(problem, branding, context);
  sendPage(res, status, page);
}

/**
 * The hosted approval page, public and keyless: the decision link's token is the credential, and
 * the approver it names is `decided_by`. A GET shows the request and never decides (link unfurlers
 * and mail scanners open links); a POST decides through the same workflow Update as the API, once
 * it has shown it comes from the page itself. An e-mail's one-click links add `?choice=approve` or
 * `reject`: the GET then offers that button first, and one press of it (the POST) decides.
 */
export function approvalPageRoutes(deps: ApiDeps, pages: PageLimits): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);
  const publicOrigin = new URL(deps.config.api.publicUrl).origin;
  const pagePath = `${APPROVAL_PAGE_PATH}/:token`;

  async function open(token: string): Promise<Opened> {
    const link = LINK_TOKEN_PATTERN.test(token) ? await findApprovalLink(deps.sql, token) : null;
    if (!link) return { problem: 'link_invalid', branding: DEFAULT_BRANDING };
    const [approval, branding] = await Promise.all([
      findApproval(deps.sql, link.environmentId, link.approvalId),
      brandingOf(deps.sql, link.environmentId),
    ]);
    if (!approval) return { problem: 'link_invalid', branding };
    return { link, approval, branding };
  }

  /**
   * Browsers say where a form was posted from; when they do, it must be this page's origin. A
   * browser that says nothing is still held to the form field.
   */
  function crossSite(req: Request): boolean {
    const origin = req.get('origin');
    if (origin !== undefined && origin !== publicOrigin) return true;
    const site = req.get('sec-fetch-site');
    return site !== undefined && site !== 'same-origin';
  }

  /**
   * A person signed in to the link's environment decides as themselves (name, issuer and subject
   * recorded), when the link was sent to them; a link sent to someone else is refused them, so a
   * forwarded link never lets one person decide in another's name. Nobody signed in: the link's
   * addressee decides, as before.
   */
  async function holderOf(req: Request, link: ApprovalLink): Promise<LinkHolder> {
    const anyone: LinkHolder = {
      decider: linkDecider(link),
      shownAs: link.approver,
      refusal: null,
    };
    if (!deps.config.people.oidc) return anyone;
    const environment = await findEnvironmentById(deps.sql, link.environmentId);
    const viewer = environment
      ? await consoleViewer(deps.sql, deps.config, req, environment)
      : null;
    if (!viewer) return anyone;
    const { session } = viewer;
    const shownAs = `${session.name} (${session.email})`;
    const addressed = linkAddressedTo(link.approver, {
      email: session.email,
      groups: session.groups,
      approves: viewerMay(viewer, 'decide'),
    });
    if (addressed === 'unrelated') return anyone;
    if (addressed === 'yes') {
      return { decider: personDecider(session, 'link'), shownAs, refusal: null };
    }
    return {
      decider: null,
      shownAs,
      refusal: `This link was sent to ${link.approver}, and you are signed in as ${session.email}: a link decides only for the person it was sent to. Decide in the console if the approval asks you.`,
    };
  }

  router.get(pagePath, async (req, res) => {
    const token = req.params.token;
    const opened = await open(token);
    if (await pages.refused(req, res, { token, usable: !('problem' in opened) })) return;
    if ('problem' in opened) {
      problemPage(res, opened.problem, opened.branding);
      return;
    }
    const { link, approval, branding } = opened;
    const view = presentApproval(approval);
    if (view.status !== 'pending') {
      problemPage(res, notPendingProblem(view), branding, { approval: view });
      return;
    }
    // A link may name an approver the four-eyes rules refuse (the policy listed the agent
    // itself), or have gone through the held agent's own key: the request is shown, the
    // buttons are not.
    const holder = await holderOf(req, link);
    const owners = await agentKeyOwners(deps.sql, approval.environmentId, approval.agentId);
    const refusal = holder.refusal ?? decisionRefusal(approval, holder.decider, link, owners);
    const maxGrant = await maxGrantSeconds(deps.sql, link.environmentId, approval.agentId);
    sendPage(
      res,
      refusal === null ? 200 : 403,
      renderReviewPage({
        branding,
        approval: view,
        approver: holder.shownAs,
        formAction: approvalLinkUrl(deps.config.api.publicUrl, token),
        formToken: formToken(deps.config.encryption, token),
        refusal,
        maxGrantSeconds: maxGrant.seconds,
        choice: linkChoiceOf(req.query[LINK_CHOICE_PARAM]),
      }),
      REVIEW_REFERRER_POLICY,
    );
  });

  router.post(
    pagePath,
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 }),
    async (req, res) => {
      const token = req.params.token;
      const opened = await open(token);
      if (await pages.refused(req, res, { token, usable: !('problem' in opened) })) return;
      if ('problem' in opened) {
        problemPage(res, opened.problem, opened.branding);
        return;
      }
      const { link, approval, branding } = opened;
      if (crossSite(req)) {
        req.log.warn({ approvalId: approval.id }, 'cross-site decision refused');
        problemPage(res, 'cross_site_request', branding);
        return;
      }
      const form = (req.is('application/x-www-form-urlencoded') ? req.body : {}) as Record<
        string,
        unknown
      >;
      if (!formTokenMatches(deps.config.encryption, token, form.csrf)) {
        req.log.warn({ approvalId: approval.id }, 'decision form without a valid form token');
        problemPage(res, 'form_invalid', branding);
        return;
      }
      const decision = form.decision;
      if (decision !== 'approve' && decision !== 'reject') {
        problemPage(res, 'decision_invalid', branding);
        return;
      }
      // A grant goes with Approve; the form's choice means nothing to Reject.
      const grant = decision === 'approve' ? grantFromForm(form) : null;
      if (grant === 'invalid') {
        problemPage(res, 'decision_invalid', branding);
        return;
      }

      const holder = await holderOf(req, link);
      if (holder.decider === null) {
        req.log.warn(
          { approvalId: approval.id },
          'a decision link used by someone it was not sent to',
        );
        problemPage(res, 'decider_refused', branding, { detail: holder.refusal });
        return;
      }

      try {
        const decided = await decideApproval(deps.sql, calls, {
          environmentId: link.environmentId,
          approvalId: approval.id,
          decision,
          decider: holder.decider,
          link,
          ...(grant ? { grant } : {}),
        });
        await markApprovalLinkUsed(deps.sql, token);
        req.log.info(
          { approvalId: approval.id, decision: decided.status, decidedBy: holder.shownAs },
          'approval decided through a decision link',
        );
        sendPage(
          res,
          200,
          renderDecidedPage({
            branding,
            approval: decided,
            retryWindowSeconds: deps.config.approvals.retryWindowSeconds,
          }),
        );
      } catch (error) {
        if (error instanceof InsufficientAccessError) {
          problemPage(res, 'decider_refused', branding, { detail: error.message });
          return;
        }
        // A grant longer than the policy allows now (it changed since the page was shown).
        if (error instanceof InvalidRequestError) {
          problemPage(res, 'grant_refused', branding, { detail: error.message });
          return;
        }
        if (error instanceof NotFoundError) {
          problemPage(res, 'link_invalid', branding);
          return;
        }
        // Temporal did not take the decision in time: the person is told what the API tells a
        // caller (api/temporal/call-workflows.ts `decide`), with its 503 and Retry-After.
        if (error instanceof ServiceUnavailableError) {
          const state = error.extra.decision_state;
          res.set(error.headers);
          problemPage(
            res,
            state === 'not_applied'
              ? 'decision_not_applied'
              : state === 'pending'
                ? 'decision_unconfirmed'
                : 'service_unavailable',
            branding,
          );
          return;
        }
        if (error instanceof ConflictError) {
          const now = await findApproval(deps.sql, link.environmentId, approval.id);
          const view = now ? presentApproval(now) : null;
          // Still pending here: another decision is being recorded at this very moment.
          const problem =
            view && view.status !== 'pending' ? notPendingProblem(view) : 'already_decided';
          problemPage(res, problem, branding, { approval: view });
          return;
        }
        throw error;
      }
    },
  );

  // A person is looking at these pages: failures end on a branded page, not a JSON envelope.
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const status =
      err !== null && typeof err === 'object' && 'status' in err && typeof err.status === 'number'
        ? err.status
        : 500;
    // The form parser's refusals (too large, bad encoding) are the request's fault.
    if (status >= 400 && status < 500) {
      problemPage(res, 'decision_invalid', DEFAULT_BRANDING);
      return;
    }
    // Postgres or Temporal did not answer in time: a 503 the person can act on, not a 500.
    const unavailable = serviceUnavailableFrom(err);
    if (unavailable) {
      req.log.warn({ err }, 'approval page: a dependency did not answer');
      res.set(unavailable.headers);
      problemPage(res, 'service_unavailable', DEFAULT_BRANDING);
      return;
    }
    req.log.error({ err }, 'approval page failed');
    problemPage(res, 'internal_error', DEFAULT_BRANDING);
  };
  router.use(onError);
  return router;
}
