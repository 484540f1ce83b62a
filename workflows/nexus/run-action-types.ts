/**
 * What Gatehouse's Nexus handler hands the workflow behind a `runAction` operation, and what its
 * activities answer. No API key travels in any of these: the handler recognises the key and
 * passes on whose it is (the key's id), which the activities check again against Postgres.
 */
import type { ErrorCode } from '../error-codes.js';
import type { RunActionInput, RunActionResult } from './gatehouse-service.js';

/** The workflow type behind `gatehouse.runAction`. */
export const NEXUS_RUN_ACTION_WORKFLOW = 'nexusRunAction';

/** The key that started the operation, as the handler recognised it. */
export interface NexusCallerRef {
  keyId: string;
  environmentName: string;
  agentId: string;
}

export interface NexusRunStart {
  caller: NexusCallerRef;
  request: RunActionInput;
  /** The Nexus operation's request id: the default Idempotency-Key and the audit trace id. */
  operationRequestId: string;
}

/** One request of the operation to the call (an Update on the call workflow, an audit row). */
export interface NexusTicket {
  /** UUIDv7 made by the workflow: stable across the activity's retries. */
  requestId: string;
  traceId: string;
}

/**
 * Codes that only a Nexus caller meets: a REST caller whose approval lapsed
 * simply retries and meets a new approval, while an operation ends with its approval.
 */
export type NexusOnlyCode = 'approval_expired' | 'approval_cancelled';

/**
 * How the operation fails: the REST error envelope, so a caller reads the same fields (`code`,
 * `message`, `approval`, `upstream_status`, `reconnect_url`, …). The codec leaves this shape
 * clear in a `nexus/…` workflow's own payloads: it is what the caller receives.
 */
export interface NexusErrorEnvelope {
  error: {
    code: ErrorCode | NexusOnlyCode;
    message: string;
    retryable: boolean;
  } & Record<string, unknown>;
}

/** What one request of the operation came to. */
export type NexusCallOutcome =
  | { kind: 'done'; result: RunActionResult }
  | { kind: 'failed'; failure: NexusErrorEnvelope }
  | { kind: 'held'; approvalId: string; expiresAt: string };

/** `nexus/<environment>/<operation request id>`: names the environment, for the codec endpoint. */
export function nexusWorkflowId(environmentName: string, operationRequestId: string): string {
  return `nexus/${environmentName}/${operationRequestId}`;
}

/** Whether a workflow id is one of a Nexus operation's workflows. */
export function isNexusWorkflowId(workflowId: string): boolean {
  return workflowId.startsWith('nexus/');
}
