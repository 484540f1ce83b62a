import type { Db, Sql } from '../../infra/database/client.js';
import type { AnsweredElsewhere, CallRequest, Preparation } from '../../workflows/call-types.js';
import type { Client } from '@temporalio/client';
import type { Config } from '../../infra/config.js';
import { findApp } from '../../workflows/catalog/index.js';
import type { PolicyDocument } from '../../workflows/policy.js';
import {
  callKey,
  keptAnswerOf,
  keptAnswerSubquery,
  type KeptAnswerRow,
} from '../db/call-idempotency-keys.js';
import { liveGrantSubquery, type LiveGrantRow } from '../db/grants.js';
import { findMcpAppStanding, type McpAppStanding } from '../db/mcp-apps.js';
import { listPolicies } from '../db/policies.js';
import { pinningRefusal } from '../mcp-apps/tool-pinning.js';
import { findOpenApiOperationStanding, type OpenApiAppStanding } from '../db/openapi-apps.js';
import { operationPinning } from '../openapi-registry/operation-pinning.js';
import {
  judgeOpenApiProxy,
  type OpenApiProxyJudgement,
} from '../openapi-registry/proxy-operations.js';
import { currentRun, earlierAnswers } from './earlier-answers.js';
import { callConditionJudge } from '../policy/conditions.js';
import { policyVerdict, type PolicySubject } from './policy-verdict.js';
import { auditAction } from './call-records.js';

interface UserConnection extends KeptAnswerRow, LiveGrantRow {
  connectedUserId: string | null;
  connectionId: string | null;
  status: 'active' | 'expired' | 'revoked' | null;
  /** Requests with an audit row already, by id: the run that wrote it (null: the API did). */
  audited: Record<string, string | null>;
}

/**
 * The user and their live connection to the app; which of these requests already have an audit
 * row (answered by an earlier run of the call); the answer kept under the call's
 * Idempotency-Key; and the live grant for the call at `at`: one
 * statement, so the checks every call needs cost no round trip of their own.
 */
async function findUserConnection(
  sql: Db,
  call: CallRequest,
  requestIds: readonly string[],
  at: number,
): Promise<UserConnection> {
  const key = call.idempotencyKey === undefined ? null : callKey(call, call.idempotencyKey);
  const grant = liveGrantSubquery(sql, {
    environmentId: call.environmentId,
    agentId: call.agentId,
    action: auditAction(call.target),
    scope: call.target.scope,
    userExternalId: call.userExternalId,
    at,
  });
  const [row]: [UserConnection?] = await sql`
    select u.id as connected_user_id, c.id as connection_id, c.status, earlier.audited, kept.*,
      live.grant_id, live.grant_user, live.grant_expires_at
    from (select 1) as one
    left join connected_users u
      on u.environment_id = ${call.environmentId} and u.external_id = ${call.userExternalId}
    left join connections c
      on c.connected_user_id = u.id and c.app = ${call.target.app} and c.status <> 'revoked'
    cross join lateral (
      select coalesce(jsonb_object_agg(a.id, a.workflow_run_id), '{}'::jsonb) as audited
      from audit_events a where a.id = any(${requestIds}::uuid[])
    ) as earlier
    left join lateral (${keptAnswerSubquery(sql, key)}) as kept on true
    left join lateral (${grant}) as live on true`;
  if (!row) throw new Error('the preparing statement always returns one row');
  return row;
}

/**
 * The requests an earlier run of the call answered, with its answers. Rows this run
 * wrote are its own steps; rows no caller was answered with are written over when this run
 * answers those requests.
 */
async function answeredBefore(
  temporal: Client,
  audited: Record<string, string | null>,
): Promise<AnsweredElsewhere> {
  // Most calls have no audit row yet: nothing to ask the run about.
  if (Object.keys(audited).length === 0) return {};
  const { workflowId, runId } = currentRun();
  const earlier = new Map(Object.entries(audited).filter(([, writer]) => writer !== runId));
  if (earlier.size === 0) return {};
  return (await earlierAnswers(temporal, workflowId, earlier)).answered;
}

/**
 * What a call needs before it runs: the user's connection to the app first, then the verdict of
 * the policy that governs the calling agent. A local activity: two short reads. `requestIds`:
 * the requests the workflow holds, checked against audit (see findUserConnection).
 */
export function prepareCallActivity(deps: { sql: Sql; temporal: Client; config: Config }) {
  const { sql, temporal } = deps;
  return async (
    call: CallRequest,
    requestIds: readonly string[] = [],
    at: number = Date.now(),
  ): Promise<Preparation> => {
    // A tool of a remote MCP app: the app, its snapshots, for the pinning rule.
    const { target } = call;
    const outside = !findApp(target.app);
    const remote = target.kind === 'action' && outside;
    const [found, policies, standing, openApi, proxied] = await Promise.all([
      findUserConnection(sql, call, requestIds, at),
      listPolicies(sql, call.environmentId),
      remote ? findMcpAppStanding(sql, call.environmentId, target.app) : null,
      // An app outside the catalog is an MCP app or an OpenAPI app; ids never clash.
      remote
        ? findOpenApiOperationStanding(
            sql,
            call.environmentId,
            target.app,
            target.action.slice(target.app.length + 1),
          )
        : null,
      // A proxy call to an app outside the catalog: an OpenAPI app's (the API admits no other).
      target.kind === 'proxy' && outside
        ? judgeOpenApiProxy(sql, call.environmentId, target.app, target)
        : null,
    ]);
    // Answered under its key already (a run that starts after the answer was kept).
    const key = call.idempotencyKey;
    const kept =
      key === undefined ? null : keptAnswerOf(deps.config.encryption, callKey(call, key), found);
    const answeredElsewhere = await answeredBefore(temporal, found.audited);
    const judged = { call, policies, at: new Date(at), grant: found };
    const prepared = !outside
      ? verdictOn(judged, found)
      : target.kind === 'proxy'
        ? openApiProxyVerdict(judged, found, proxied ?? null)
        : openApi
          ? await openApiVerdict(judged, found, openApi)
          : await remoteToolVerdict(judged, found, standing);
    return {
      ...prepared,
      answeredElsewhere,
      ...(kept ? { kept } : {}),
    };
  };
}

/** The user's connection first, then the verdict of the policy that governs the agent. */
function verdictOn(judged: Judged, found: UserConnection): Preparation {
  if (
    found.connectedUserId === null ||
    found.connectionId === null ||
    found.status === null ||
    found.status === 'revoked'
  ) {
    return {
      ok: false,
      code: 'connection_required',
      connectedUserId: found.connectedUserId,
      connectionId: null,
    };
  }
  if (found.status === 'expired') {
    return {
      ok: false,
      code: 'connection_expired',
      connectedUserId: found.connectedUserId,
      connectionId: found.connectionId,
    };
  }
  return policyPreparation(judged, found.connectedUserId, found.connectionId);
}

/**
 * What a verdict is reached on: the call, the environment's policies, the moment (the
 * workflow's clock, passed in) that conditions read as `now`, and the call's live grant then.
 */
interface Judged {
  call: CallRequest;
  policies: readonly PolicyDocument[];
  at: Date;
  grant: LiveGrantRow;
  /** A proxy call to an OpenAPI app: the operations that bound it (PolicySubject.proxy). */
  proxy?: PolicySubject['proxy'];
}

/** The verdict of the policy that governs the agent, for a call whose connection is settled. */
function policyPreparation(
  { call, policies, at, grant, proxy }: Judged,
  connectedUserId: string | null,
  connectionId: string | null,
): Preparation {
  const { target } = call;
  const subject: PolicySubject = {
    app: target.app,
    scope: target.scope,
    action: target.kind === 'action' ? target.action : null,
    ...(proxy ? { proxy } : {}),
  };
  const verdict = policyVerdict(policies, call.agentId, subject, callConditionJudge(call, at));
  const prepared = {
    ok: true as const,
    connectedUserId,
    connectionId,
    decision: verdict.decision,
    reason: verdict.reason,
    policyId: verdict.policyId,
    policyVersion: verdict.policyVersion,
    rule: verdict.rule,
    approval: verdict.approval,
  };
  // A live grant turns `ask`, and only `ask`, into `allow`, while the policy that
  // governs the agent allows grants at all (max_grant_seconds 0 is the switch that stops them).
  const grantsOn = (verdict.approval.max_grant_seconds ?? 0) > 0;
  if (verdict.decision !== 'ask' || grant.grantId === null || !grantsOn) return prepared;
  const whom = grant.grantUser === null ? 'any user' : `user ${grant.grantUser}`;
  const until = grant.grantExpiresAt?.toISOString() ?? '?';
  return {
    ...prepared,
    decision: 'allow',
    reason: `${verdict.reason}; grant ${grant.grantId} (for ${whom}, until ${until}) → allow`,
    grantId: grant.grantId,
  };
}

/**
 * A call to a tool of a remote MCP app. The pinning rule first, since it is about the
 * tool and not the user: a tool the app no longer has, changed since the accepted snapshot, or
 * outside the allow-list, is denied with the reason naming it, made or approved, whoever calls.
 * Then, for a server that asks for authorization, the user's connection as for any app (none is
 * needed otherwise), then the policy.
 */
async function remoteToolVerdict(
  judged: Judged,
  found: UserConnection,
  standing: McpAppStanding | null,
): Promise<Preparation> {
  const { call } = judged;
  const refusal =
    call.target.kind === 'action' ? await pinningRefusal(standing, call.target) : null;
  if (refusal !== null || !standing) {
    return {
      ok: true,
      connectedUserId: found.connectedUserId,
      connectionId: found.connectionId,
      decision: 'deny',
      reason: `tool pinning: ${refusal ?? 'no such app'}`,
      policyId: null,
      policyVersion: null,
      rule: 'tool pinning',
      approval: { requested_from: [], ttl_seconds: 0 },
    };
  }
  if (standing.app.auth === 'none') {
    return policyPreparation(judged, found.connectedUserId, null);
  }
  return verdictOn(judged, found);
}

/**
 * A call to an operation of an OpenAPI app: the pinning rule first (a changed, new, removed or
 * unservable operation is denied naming why, made or approved), then the user's connection when
 * the operation needs a credential (as verdictOn for catalog apps), then the policy. An operation
 * that may be called anonymously but also takes the app's scheme is sent with the user's
 * connection when they have an active one, and without otherwise. The upstream step sets the
 * credential (activities/openapi-registry/operation-call.ts).
 */
async function openApiVerdict(
  judged: Judged,
  found: UserConnection,
  standing: OpenApiAppStanding,
): Promise<Preparation> {
  const { call } = judged;
  const pinning =
    call.target.kind === 'action'
      ? await operationPinning(standing, call.target)
      : { refusal: 'a proxy call is judged by openApiProxyVerdict' };
  if (pinning.refusal !== null) {
    return {
      ok: true,
      connectedUserId: found.connectedUserId,
      connectionId: found.connectionId,
      decision: 'deny',
      reason: `operation pinning: ${pinning.refusal}`,
      policyId: null,
      policyVersion: null,
      rule: 'operation pinning',
      approval: { requested_from: [], ttl_seconds: 0 },
    };
  }
  if (pinning.credential === 'required') return verdictOn(judged, found);
  const connected = pinning.credential === 'optional' && found.status === 'active';
  return policyPreparation(judged, found.connectedUserId, connected ? found.connectionId : null);
}

/**
 * A proxy call to an OpenAPI app (activities/openapi-registry/proxy-standing.ts): the pinning
 * rule through the proxy first (a request that is an operation not callable now, to an app with
 * no accepted snapshot, or graded otherwise than when it was made, is denied naming why, made or
 * approved), then the user's connection as the operations it is need it, then the policy, bounded
 * by the app's accepted operations and by the rules naming the ones the request is.
 */
function openApiProxyVerdict(
  judged: Judged,
  found: UserConnection,
  judgement: OpenApiProxyJudgement | null,
): Preparation {
  const refusal =
    judgement === null
      ? `app "${judged.call.target.app}" is not registered in this environment (any more): its proxy cannot be called`
      : judgement.refusal;
  if (judgement === null || refusal !== null) {
    return {
      ok: true,
      connectedUserId: found.connectedUserId,
      connectionId: found.connectionId,
      decision: 'deny',
      reason: `operation pinning: ${String(refusal)}`,
      policyId: null,
      policyVersion: null,
      rule: 'operation pinning',
      approval: { requested_from: [], ttl_seconds: 0 },
    };
  }
  const { actions, matched } = judgement.grading;
  const bounded = { ...judged, proxy: { actions, matched } };
  if (judgement.credential === 'required') return verdictOn(bounded, found);
  const connected = judgement.credential === 'optional' && found.status === 'active';
  return policyPreparation(bounded, found.connectedUserId, connected ? found.connectionId : null);
}
