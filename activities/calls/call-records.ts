import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../../infra/config.js';
import type { Db, Sql } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import type {
  AnsweredElsewhere,
  ApprovalView,
  AuditEntry,
  CallRequest,
  CallTargetInput,
  DecisionOutcome,
  DecisionRecord,
  KeptAnswer,
  OpenedApproval,
} from '../../workflows/call-types.js';
import { answerToKeep, callKey } from '../db/call-idempotency-keys.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import { approvalView, consumeApproval, openApproval, settleApproval } from '../db/approvals.js';
import { grantView, insertGrant } from '../db/grants.js';
import { approvalRequest } from './approval-request.js';
import { recordDecision } from './decision-records.js';
import { insertAuditEvents, writeRunAuditEvents, type NewAuditEvent } from '../db/audit-events.js';
import { currentRun, earlierAnswers } from './earlier-answers.js';
import { approvalLatency, auditWriteRetries, callsTotal } from '../../infra/telemetry/metrics.js';

/** Counts the answers just recorded: one audit event, one call answered (README, "Observe it"). */
function countCalls(call: CallRequest, entries: AuditEntry[]): void {
  for (const entry of entries) {
    callsTotal.inc({ decision: entry.decision, app: call.target.app, via: call.via });
  }
}

/** A person's decision: how long the call waited for it. */
function observeDecision(approval: { createdAt: Date; decidedAt: Date | null }): void {
  if (approval.decidedAt) {
    approvalLatency.observe((approval.decidedAt.getTime() - approval.createdAt.getTime()) / 1000);
  }
}

/** Audit names proxy calls `<app>.proxy`, the action policy rules name them by. */
export function auditAction(target: CallTargetInput): string {
  return target.kind === 'action' ? target.action : `${target.app}.proxy`;
}

/** The audit event's `request`: what was asked, by whom, for whom. Never a credential. */
export function auditRequest(call: CallRequest): Record<string, unknown> {
  const base = { action: auditAction(call.target), user: call.userExternalId, via: call.via };
  const { target } = call;
  if (target.kind === 'action') return { ...base, input: target.input };
  return {
    ...base,
    method: target.method,
    path: target.path,
    query: target.query || null,
    body_bytes: target.bodyBase64 === null ? 0 : Buffer.byteLength(target.bodyBase64, 'base64'),
  };
}

/** Who and what the audit rows of one call step share. */
export interface AuditContext {
  connectedUserId: string | null;
  connectionId: string | null;
  policyId: string | null;
  policyVersion: number | null;
  /** The grant that turned the policy's `ask` into `allow`. */
  grantId?: string | null;
}

function auditEvents(call: CallRequest, context: AuditContext, entries: AuditEntry[]) {
  const request = auditRequest(call);
  return entries.map((entry): NewAuditEvent => ({
    id: entry.id,
    environmentId: call.environmentId,
    action: auditAction(call.target),
    scope: call.target.scope,
    decision: entry.decision,
    reason: entry.reason,
    agentId: call.agentId,
    via: call.via,
    userExternalId: call.userExternalId,
    connectedUserId: context.connectedUserId,
    connectionId: context.connectionId,
    approvalId: entry.approvalId,
    request,
    response: entry.response,
    traceId: entry.traceId,
    policyId: context.policyId,
    policyVersion: context.policyVersion,
    grantId: context.grantId ?? null,
  }));
}

/** The audit rows of callers the API answers itself (from Postgres); written again, no-ops. */
export async function recordCallAudit(
  sql: Db,
  call: CallRequest,
  context: AuditContext,
  entries: AuditEntry[],
): Promise<void> {
  await insertAuditEvents(sql, auditEvents(call, context, entries));
  countCalls(call, entries);
}

/**
 * The audit rows of one step of a call workflow run, one per caller: each says what
 * its caller is answered. A request an earlier run of the call answered keeps that run's row and
 * is given that run's answer (returned, by request id); a row no caller was answered with is
 * written over.
 */
export async function recordRunAudit(
  deps: RunRecordDeps,
  call: CallRequest,
  context: AuditContext,
  entries: AuditEntry[],
  final?: FinalAnswer,
): Promise<AnsweredElsewhere> {
  const { workflowId, runId } = currentRun();
  const events = auditEvents(call, context, entries);
  // The answer kept under the Idempotency-Key goes in with the rows, before any caller is
  // answered, so a retry with the key never finds the call answered without its answer kept.
  const key = call.idempotencyKey;
  const keep =
    final && key !== undefined ? answerToKeep(deps.keyring, callKey(call, key), final) : undefined;
  const earlier = await writeRunAuditEvents(deps.sql, events, runId, keep ? { keep } : {});
  countCalls(call, entries);
  if (earlier.size === 0) return {};
  const { answered, unanswered } = await earlierAnswers(deps.temporal, workflowId, earlier);
  if (unanswered.length > 0) {
    const over = events.filter((event) => unanswered.includes(event.id ?? ''));
    await writeRunAuditEvents(deps.sql, over, runId, {
      replacing: unanswered,
      ...(keep ? { keep } : {}),
    });
  }
  return answered;
}

/** What a call workflow's audit writes need. */
export interface RunRecordDeps {
  sql: Db;
  temporal: Client;
  keyring: Keyring;
}

/** A call's final answer (see finalForKey), to keep under its Idempotency-Key. */
export type FinalAnswer = Pick<KeptAnswer, 'answer' | 'decision'>;

export interface OpenApprovalInput {
  workflowId: string;
  requestedFrom: string[];
  ttlSeconds: number;
  policyId: string;
  policyVersion: number;
  policyRule: string;
  /** Absent from histories recorded before approvals could need several decisions: 1. */
  quorum?: number;
}

/** The Postgres side of a governed call: its audit rows and its approval. Local activities. */
export function callRecordActivities(deps: { sql: Sql; temporal: Client; config: Config }) {
  const { sql } = deps;
  const runDeps: RunRecordDeps = { sql, temporal: deps.temporal, keyring: deps.config.encryption };
  return {
    /** `final`: the call's final answer, kept under its Idempotency-Key when it has one. */
    async recordAudit(
      call: CallRequest,
      context: AuditContext,
      entries: AuditEntry[],
      final?: FinalAnswer,
    ): Promise<AnsweredElsewhere> {
      // An earlier attempt failed: the callers' answers waited for this one.
      if (Context.current().info.attempt > 1) auditWriteRetries.inc();
      return recordRunAudit(runDeps, call, context, entries, final);
    },

    async openApproval(call: CallRequest, input: OpenApprovalInput): Promise<OpenedApproval> {
      const approval = await openApproval(sql, {
        environmentId: call.environmentId,
        fingerprint: call.fingerprint,
        workflowId: input.workflowId,
        action: auditAction(call.target),
        scope: call.target.scope,
        agentId: call.agentId,
        userExternalId: call.userExternalId,
        requestedFrom: input.requestedFrom,
        // What the approver is shown is what will run: the input, or the request as it will be sent.
        request: approvalRequest(call),
        policyId: input.policyId,
        policyVersion: input.policyVersion,
        policyRule: input.policyRule,
        ttlSeconds: input.ttlSeconds,
        quorum: input.quorum ?? 1,
      });
      return {
        ...approvalView(approval),
        agent_key_owners: approval.agentKeyOwners,
        decided: approval.decisions.map((decision) => decision.identity),
      };
    },

    /**
     * One decision on a held call (see decision-records.ts): the approval after it, still pending
     * until the quorum or a rejection; settled, with the grant it made, by the decision that
     * decides it.
     */
    async recordDecision(record: DecisionRecord): Promise<DecisionOutcome> {
      const { settled, ...outcome } = await recordDecision(sql, record);
      if (settled) observeDecision(settled);
      return outcome;
    },

    /**
     * null when the approval was no longer pending (decided elsewhere, or gone with its user).
     * `grant` (approvals only): made in the same transaction, so an approval is never
     * recorded without the grant it carried, nor a grant without its approval. `at` is the
     * workflow's clock, from which the grant runs.
     */
    async settleApproval(
      approvalId: string,
      status: 'approved' | 'rejected' | 'expired' | 'cancelled',
      decidedBy: string | null,
      grant?: GrantRequest & { at: number },
    ): Promise<ApprovalView | null> {
      if (!grant || status !== 'approved' || decidedBy === null) {
        const approval = await settleApproval(sql, approvalId, status, decidedBy);
        if (approval) observeDecision(approval);
        return approval ? approvalView(approval) : null;
      }
      return sql.begin(async (tx) => {
        const approval = await settleApproval(tx, approvalId, status, decidedBy);
        if (!approval) return null;
        observeDecision(approval);
        const made = await insertGrant(tx, {
          environmentId: approval.environmentId,
          agentId: approval.agentId,
          action: approval.action,
          scope: approval.scope,
          userExternalId: grant.for === 'user' ? approval.userExternalId : null,
          approvalId: approval.id,
          createdBy: decidedBy,
          at: grant.at,
          seconds: grant.seconds,
        });
        return { ...approvalView(approval), grant: grantView(made, new Date(grant.at)) };
      });
    },

    async consumeApproval(approvalId: string): Promise<void> {
      await consumeApproval(sql, approvalId);
    },
  };
}
