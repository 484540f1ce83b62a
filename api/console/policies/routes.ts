import { Router, type Response } from 'express';
import { z } from 'zod';
import { recordConsoleChange } from '../../../activities/audit/console-changes.js';
import { findAuditEvent, type AuditEvent } from '../../../activities/db/audit-events.js';
import { grantView, listGrants, revokeGrant } from '../../../activities/db/grants.js';
import {
  findPolicy,
  findPolicyVersion,
  listPolicies,
  type StoredPolicy,
} from '../../../activities/db/policies.js';
import { listPolicyVersions } from '../../../activities/db/policy-versions.js';
import { simulatePolicy } from '../../../activities/policy/simulation.js';
import type { ApiDeps } from '../../deps.js';
import { viewerMay } from '../../people/console-viewer.js';
import { presentSimulation } from '../../policies/simulation-answer.js';
import { callWindow } from '../../policies/simulation-inputs.js';
import {
  policyApproval,
  policyIdParam,
  present,
  savePolicyVersion,
} from '../../routes/policies.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf, formOf, type ConsoleContext } from '../context.js';
import { prettyJson } from '../pages/line-diff.js';
import { sendConsolePage } from '../respond.js';
import { sendConsoleNotice } from '../send-notice.js';
import { issuesOf, normalizedText, readCandidate, type PolicyBody } from './candidate.js';
import { renderEditPage } from './edit-page.js';
import { GRANT_STATUSES, renderGrantsPage } from './grants-page.js';
import { renderPolicyList } from './list-page.js';
import { renderPolicyPage } from './policy-page.js';
import { editableJson } from './policy-json.js';
import { simulatedDigest, simulatedDigestMatches } from './simulated-digest.js';
import { renderSimulationPage } from './simulation-page.js';
import { renderVersionPage } from './version-page.js';

const VERSIONS_PER_PAGE = 20;
const GRANTS_PER_PAGE = 50;

const versionNumber = z.coerce
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);

const policyQuery = z.object({ before: versionNumber.optional(), saved: versionNumber.optional() });
const versionParams = z.object({ id: policyIdParam.shape.id, version: versionNumber });
const candidateForm = z.object({ candidate: z.string().max(200_000) });
const saveForm = candidateForm.extend({
  based_on: versionNumber,
  digest: z.string().max(100),
});
const grantsQuery = z.object({
  status: z.enum(GRANT_STATUSES).or(z.literal('')).optional(),
  before: z.uuid().optional(),
  revoked: z.uuid().optional(),
});
const grantParam = z.object({ id: z.uuid() });

/** How a person is named where an agent would be: `updated_by`, `revoked_by`, the registry. */
const personId = (context: ConsoleContext) => `person:${context.viewer.session.email}`;

/**
 * Policies and grants in the console. Reading takes role `read`; editing a policy and revoking
 * a grant take `govern`, as their API operations take `policies:manage` and `grants:manage`,
 * scopes the keys agents call with lack: only people reach these pages, and no governed agent
 * edits its own policy here either. An edit is simulated first, with the API's simulation, and
 * saved only as simulated (simulated-digest.ts), through the function the API's PUT writes with.
 */
export function policyPages(deps: ApiDeps): Router {
  const router = Router({ mergeParams: true });

  /** The policy a path names, or a 404 page (null). */
  const policyOf = async (res: Response, idParam: unknown): Promise<StoredPolicy | null> => {
    const context = consoleContextOf(res);
    const parsed = policyIdParam.safeParse({ id: idParam });
    const policy = parsed.success
      ? await findPolicy(deps.sql, context.environment.id, parsed.data.id)
      : null;
    if (!policy) {
      sendConsoleNotice(res, 404, {
        title: 'No such policy',
        message: 'This environment has no policy by that id.',
        action: { href: `${context.shown.base}/policies`, label: 'To the policies' },
      });
    }
    return policy;
  };

  router.get('/policies', requireRole('read'), async (_req, res) => {
    const context = consoleContextOf(res);
    const policies = await listPolicies(deps.sql, context.environment.id);
    sendConsolePage(
      res,
      200,
      renderPolicyList({ branding: context.branding, viewer: context.shown, policies }),
    );
  });

  router.get('/policies/:id', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const policy = await policyOf(res, req.params.id);
    if (!policy) return;
    const query = policyQuery.safeParse(req.query);
    const before = query.success ? query.data.before : undefined;
    const saved = query.success ? query.data.saved : undefined;
    const rows = await listPolicyVersions(deps.sql, context.environment.id, policy.id, {
      ...(before === undefined ? {} : { before }),
      limit: VERSIONS_PER_PAGE,
    });
    const versions = rows.slice(0, VERSIONS_PER_PAGE);
    sendConsolePage(
      res,
      200,
      renderPolicyPage({
        branding: context.branding,
        viewer: context.shown,
        policy: present(policy),
        versions: versions.map(present),
        olderThan: rows.length > VERSIONS_PER_PAGE ? (versions.at(-1)?.version ?? null) : null,
        mayEdit: viewerMay(context.viewer, 'govern'),
        ...(saved === undefined ? {} : { saved }),
      }),
    );
  });

  router.get('/policies/:id/versions/:version', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const params = versionParams.safeParse(req.params);
    const version = params.success
      ? await findPolicyVersion(
          deps.sql,
          context.environment.id,
          params.data.id,
          params.data.version,
        )
      : null;
    if (!version) {
      sendConsoleNotice(res, 404, {
        title: 'No such version',
        message: 'This environment has no policy version by that id and number.',
        action: { href: `${context.shown.base}/policies`, label: 'To the policies' },
      });
      return;
    }
    const previous =
      version.version > 1
        ? await findPolicyVersion(deps.sql, context.environment.id, version.id, version.version - 1)
        : null;
    sendConsolePage(
      res,
      200,
      renderVersionPage({
        branding: context.branding,
        viewer: context.shown,
        version: present(version),
        text: editableJson(version),
        previous: previous ? { version: previous.version, text: editableJson(previous) } : null,
      }),
    );
  });

  router.get('/policies/:id/edit', requireRole('govern'), async (req, res) => {
    const context = consoleContextOf(res);
    const policy = await policyOf(res, req.params.id);
    if (!policy) return;
    sendConsolePage(
      res,
      200,
      renderEditPage({
        branding: context.branding,
        viewer: context.shown,
        policy,
        text: editableJson(policy),
        issues: [],
      }),
    );
  });

  /**
   * The candidate read, with the approval settings PUT would write (the body's, else the
   * current ones), refused as PUT refuses them; or the edit page again, naming what is wrong.
   */
  const candidateOf = (
    res: Response,
    policy: StoredPolicy,
    text: string,
  ): { body: PolicyBody; approval: ReturnType<typeof policyApproval> } | null => {
    const context = consoleContextOf(res);
    const reading = readCandidate(text);
    let issues = reading.ok ? [] : reading.issues;
    if (reading.ok) {
      try {
        return { body: reading.body, approval: policyApproval(reading.body, policy.approval) };
      } catch (error) {
        issues = issuesOf(error);
      }
    }
    sendConsolePage(
      res,
      400,
      renderEditPage({
        branding: context.branding,
        viewer: context.shown,
        policy,
        text: normalizedText(text),
        issues,
      }),
    );
    return null;
  };

  const agentClaimed = (
    res: Response,
    policy: StoredPolicy,
    text: string,
    agent: string,
    by: string,
  ) => {
    const context = consoleContextOf(res);
    sendConsolePage(
      res,
      409,
      renderEditPage({
        branding: context.branding,
        viewer: context.shown,
        policy,
        text: normalizedText(text),
        issues: [
          { path: 'agents', message: `agent "${agent}" is already governed by policy "${by}"` },
        ],
      }),
    );
  };

  router.post('/policies/:id/simulate', requireRole('govern'), async (req, res) => {
    const context = consoleContextOf(res);
    const policy = await policyOf(res, req.params.id);
    if (!policy) return;
    const form = candidateForm.safeParse(formOf(req));
    const text = form.success ? form.data.candidate : '';
    const candidate = candidateOf(res, policy, text);
    if (!candidate) return;
    const outcome = await simulatePolicy(
      deps.sql,
      context.environment.id,
      policy.id,
      { ...candidate.body, approval: candidate.approval },
      callWindow({}),
    );
    if (!outcome.ok) {
      agentClaimed(res, policy, text, outcome.agent, outcome.claimedBy);
      return;
    }
    const simulation = presentSimulation(outcome.simulation);
    const ids = new Set([
      ...simulation.changes.flatMap((change) => change.samples),
      ...simulation.cannot_judge.samples.map((sample) => sample.audit_id),
    ]);
    const calls = new Map<string, AuditEvent>();
    for (const id of ids) {
      const call = await findAuditEvent(deps.sql, context.environment.id, id);
      if (call) calls.set(id, call);
    }
    sendConsolePage(
      res,
      200,
      renderSimulationPage({
        branding: context.branding,
        viewer: context.shown,
        policy,
        simulation,
        calls,
        text: normalizedText(text),
        currentJson: editableJson(policy),
        candidateJson: prettyJson(candidate.body),
        digest: simulatedDigest(context.viewer.session, {
          environmentId: context.environment.id,
          policyId: policy.id,
          basedOn: policy.version,
          body: candidate.body,
        }),
      }),
    );
  });

  router.post('/policies/:id/save', requireRole('govern'), async (req, res) => {
    const context = consoleContextOf(res);
    const policy = await policyOf(res, req.params.id);
    if (!policy) return;
    const edit = `${context.shown.base}/policies/${policy.id}/edit`;
    const form = saveForm.safeParse(formOf(req));
    if (!form.success) {
      sendConsoleNotice(res, 400, {
        title: 'That form could not be read',
        message: 'It does not carry a simulated candidate. Nothing was saved.',
        action: { href: edit, label: 'Edit the policy' },
      });
      return;
    }
    const { candidate: text, based_on: basedOn, digest } = form.data;
    const candidate = candidateOf(res, policy, text);
    if (!candidate) return;
    const simulated = {
      environmentId: context.environment.id,
      policyId: policy.id,
      basedOn,
      body: candidate.body,
    };
    if (!simulatedDigestMatches(context.viewer.session, simulated, digest)) {
      req.log.warn(
        { policyId: policy.id, personId: context.viewer.session.personId },
        'console policy save refused: not the candidate simulated',
      );
      sendConsoleNotice(res, 400, {
        title: 'This is not the version you simulated',
        message:
          'The candidate sent with “Save this version” differs from the one this session simulated, so nothing was saved. Simulate the version you mean to save, read what it changes, then save it.',
        action: { href: edit, label: 'Edit the policy' },
      });
      return;
    }
    let outcome;
    try {
      outcome = await savePolicyVersion(
        deps.sql,
        context.environment.id,
        policy.id,
        candidate.body,
        personId(context),
        basedOn,
      );
    } catch (error) {
      const issues = issuesOf(error);
      sendConsolePage(
        res,
        400,
        renderEditPage({
          branding: context.branding,
          viewer: context.shown,
          policy,
          text: normalizedText(text),
          issues,
        }),
      );
      return;
    }
    if (!outcome.saved && outcome.reason === 'agent_claimed') {
      agentClaimed(res, policy, text, outcome.agent, outcome.claimedBy);
      return;
    }
    if (!outcome.saved) {
      sendConsoleNotice(res, 409, {
        title: 'The policy changed since you simulated',
        message: `Someone saved another version after version ${String(basedOn)}, which your simulation compared with; nothing was saved. Simulate your candidate against the policy as it is now.`,
        action: { href: edit, label: 'Edit the policy' },
      });
      return;
    }
    await recordConsoleChange(deps.sql, {
      environmentId: context.environment.id,
      actor: context.viewer.session,
      action: 'console.policies.save',
      target: {
        policy: policy.id,
        version: outcome.version,
        previous_version: basedOn,
        body: candidate.body,
      },
      traceId: res.locals.traceId,
    });
    req.log.info(
      { policyId: policy.id, version: outcome.version, personId: context.viewer.session.personId },
      'policy version saved in the console',
    );
    res.redirect(
      303,
      `${context.shown.base}/policies/${policy.id}?saved=${String(outcome.version)}`,
    );
  });

  router.get('/grants', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const query = grantsQuery.safeParse(req.query);
    const filters = query.success ? query.data : {};
    const status = filters.status === '' ? undefined : filters.status;
    const rows = await listGrants(
      deps.sql,
      context.environment.id,
      {
        hiddenAgentId: personId(context),
        ...(status ? { status } : {}),
        ...(filters.before ? { before: filters.before } : {}),
      },
      GRANTS_PER_PAGE + 1,
    );
    const grants = rows.slice(0, GRANTS_PER_PAGE);
    const last = grants.at(-1);
    const next =
      rows.length > GRANTS_PER_PAGE && last
        ? `${context.shown.base}/grants?${new URLSearchParams({
            ...(status ? { status } : {}),
            before: last.id,
          }).toString()}`
        : null;
    const now = new Date();
    sendConsolePage(
      res,
      query.success ? 200 : 400,
      renderGrantsPage({
        branding: context.branding,
        viewer: context.shown,
        grants: grants.map((grant) => grantView(grant, now)),
        status,
        next,
        mayRevoke: viewerMay(context.viewer, 'govern'),
        ...(filters.revoked ? { revoked: filters.revoked } : {}),
        ...(query.success ? {} : { unreadable: true }),
      }),
    );
  });

  router.post('/grants/:id/revoke', requireRole('govern'), async (req, res) => {
    const context = consoleContextOf(res);
    const param = grantParam.safeParse(req.params);
    const by = personId(context);
    const grant = param.success
      ? await revokeGrant(deps.sql, context.environment.id, param.data.id, by)
      : null;
    if (!grant) {
      sendConsoleNotice(res, 404, {
        title: 'No such grant',
        message: 'This environment has no grant by that id.',
        action: { href: `${context.shown.base}/grants`, label: 'To the grants' },
      });
      return;
    }
    // Revoking a revoked grant leaves it as it was: only a revocation of this person's counts.
    if (grant.revokedBy === by) {
      await recordConsoleChange(deps.sql, {
        environmentId: context.environment.id,
        actor: context.viewer.session,
        action: 'console.grants.revoke',
        target: {
          grant: grant.id,
          agent_id: grant.agentId,
          grant_action: grant.action,
          scope: grant.scope,
          user: grant.userExternalId,
          expires_at: grant.expiresAt.toISOString(),
        },
        traceId: res.locals.traceId,
      });
      req.log.info({ grantId: grant.id, revokedBy: by }, 'grant revoked in the console');
    }
    res.redirect(303, `${context.shown.base}/grants?revoked=${grant.id}`);
  });

  return router;
}
