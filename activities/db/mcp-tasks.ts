import type { Db, Sql } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import type { ApprovalStatus } from '../../workflows/call-types.js';
import type { McpTaskAnswer } from '../../workflows/mcp-task-types.js';
import { settleApproval, type Approval } from './approvals.js';
import { insertAuditEvents, type NewAuditEvent } from './audit-events.js';

/** An MCP task's status, as the protocol names them (it has no `input_required` here). */
export type McpTaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** Heard by every API process when a task ends: its waiting `tasks/result` requests answer. */
export const MCP_TASK_SETTLED_CHANNEL = 'mcp_task_settled';

export interface McpTask {
  id: string;
  environmentId: string;
  agentId: string;
  keyId: string;
  userExternalId: string;
  tool: string;
  action: string;
  approvalId: string | null;
  workflowId: string | null;
  status: McpTaskStatus;
  statusMessage: string | null;
  /** Sealed McpTaskAnswer, once the task ended. */
  answer: string | null;
  createdAt: Date;
  lastUpdatedAt: Date;
  ttlMs: number;
  expiresAt: Date;
}

/** A task with where its approval stands, which is what a working task's status message says. */
export interface McpTaskWithApproval extends McpTask {
  approvalStatus: ApprovalStatus | null;
  approvalRequestedFrom: string[] | null;
  approvalExpiresAt: Date | null;
}

const taskColumns = (sql: Db) => sql`
  t.id, t.environment_id, t.agent_id, t.key_id, t.user_external_id, t.tool, t.action,
  t.approval_id, t.workflow_id, t.status, t.status_message, t.answer, t.created_at,
  t.last_updated_at, t.ttl_ms::float8 as ttl_ms, t.expires_at,
  a.status as approval_status, a.requested_from as approval_requested_from,
  a.expires_at as approval_expires_at`;

/**
 * Whose task a request may see: the agent's, in its environment, for the same end user. An agent
 * serves many users, each through their own MCP session: one user's client never sees another's.
 */
export interface TaskOwner {
  environmentId: string;
  agentId: string;
  userExternalId: string;
}

export type NewMcpTask = Pick<
  McpTask,
  | 'id'
  | 'environmentId'
  | 'agentId'
  | 'keyId'
  | 'userExternalId'
  | 'tool'
  | 'action'
  | 'approvalId'
  | 'workflowId'
  | 'ttlMs'
>;

/** A task created held: `working`, until its workflow records how the call ended. */
export async function insertMcpTask(sql: Db, task: NewMcpTask): Promise<McpTask> {
  const [row]: [McpTask?] = await sql`
    insert into mcp_tasks (id, environment_id, agent_id, key_id, user_external_id, tool, action,
      approval_id, workflow_id, status, ttl_ms, expires_at)
    values (${task.id}, ${task.environmentId}, ${task.agentId}, ${task.keyId},
      ${task.userExternalId}, ${task.tool}, ${task.action}, ${task.approvalId}, ${task.workflowId},
      'working', ${task.ttlMs}, now() + ${task.ttlMs} * interval '1 millisecond')
    returning id, environment_id, agent_id, key_id, user_external_id, tool, action, approval_id,
      workflow_id, status, status_message, answer, created_at, last_updated_at,
      ttl_ms::float8 as ttl_ms, expires_at`;
  if (!row) throw new Error('the task was not stored');
  return row;
}

/**
 * A task created ended (the call ran, or was refused, at once): stored so that `tasks/get`,
 * `tasks/result` and `tasks/list` answer for it as for any other.
 */
export async function insertEndedMcpTask(
  sql: Db,
  keyring: Keyring,
  task: NewMcpTask,
  ending: TaskEnding,
): Promise<McpTask> {
  const [row]: [McpTask?] = await sql`
    insert into mcp_tasks (id, environment_id, agent_id, key_id, user_external_id, tool, action,
      approval_id, workflow_id, status, status_message, answer, ttl_ms, expires_at)
    values (${task.id}, ${task.environmentId}, ${task.agentId}, ${task.keyId},
      ${task.userExternalId}, ${task.tool}, ${task.action}, ${task.approvalId}, ${task.workflowId},
      ${ending.status}, ${ending.statusMessage},
      ${seal(keyring, JSON.stringify(ending.answer), answerAad(task.id))}, ${task.ttlMs},
      now() + ${task.ttlMs} * interval '1 millisecond')
    returning id, environment_id, agent_id, key_id, user_external_id, tool, action, approval_id,
      workflow_id, status, status_message, answer, created_at, last_updated_at,
      ttl_ms::float8 as ttl_ms, expires_at`;
  if (!row) throw new Error('the task was not stored');
  return row;
}

/**
 * Deletes up to `limit` tasks past their ttl (they answer "not found" already): called as tasks
 * are created, so the table holds about a ttl's worth of tasks without a job of its own.
 */
export async function pruneExpiredMcpTasks(sql: Db, limit: number): Promise<number> {
  const rows = await sql`
    delete from mcp_tasks where id in (
      select id from mcp_tasks where expires_at <= now() order by expires_at limit ${limit})
    returning id`;
  return rows.length;
}

/**
 * A task whose workflow the API could not start in time: deleted, so it never was one, unless
 * the workflow did start and stamped it meanwhile (`claimMcpTask`). Whether it was deleted.
 */
export async function abandonMcpTask(sql: Db, id: string): Promise<boolean> {
  const rows = await sql`
    delete from mcp_tasks where id = ${id} and started_at is null returning id`;
  return rows.length > 0;
}

/**
 * Stamps the task as its workflow begins. False when the row is gone: the API gave up on the
 * start and told the agent so, and the workflow must run nothing. Safe to run twice.
 */
export async function claimMcpTask(sql: Db, id: string): Promise<boolean> {
  const rows = await sql`
    update mcp_tasks set started_at = coalesce(started_at, now()) where id = ${id} returning id`;
  return rows.length > 0;
}

/** The task, if `owner` may see it and it has not outlived its ttl. */
export async function findMcpTask(
  sql: Db,
  owner: TaskOwner,
  id: string,
): Promise<McpTaskWithApproval | null> {
  const [row]: [McpTaskWithApproval?] = await sql`
    select ${taskColumns(sql)}
    from mcp_tasks t left join approvals a on a.id = t.approval_id
    where t.id = ${id} and t.environment_id = ${owner.environmentId}
      and t.agent_id = ${owner.agentId} and t.user_external_id = ${owner.userExternalId}
      and t.expires_at > now()`;
  return row ?? null;
}

/** Where a page of `tasks/list` starts: after this task, newest first. */
export interface TaskCursor {
  createdAt: string;
  id: string;
}

export async function listMcpTasks(
  sql: Db,
  owner: TaskOwner,
  after: TaskCursor | null,
  limit: number,
): Promise<McpTaskWithApproval[]> {
  const page = after
    ? sql`and (t.created_at, t.id) < (${after.createdAt}::timestamptz, ${after.id})`
    : sql``;
  return sql<McpTaskWithApproval[]>`
    select ${taskColumns(sql)}
    from mcp_tasks t left join approvals a on a.id = t.approval_id
    where t.environment_id = ${owner.environmentId} and t.agent_id = ${owner.agentId}
      and t.user_external_id = ${owner.userExternalId} and t.expires_at > now() ${page}
    order by t.created_at desc, t.id desc
    limit ${limit}`;
}

/** How a task ended: its status, why in words, and the call's answer. */
export interface TaskEnding {
  status: Exclude<McpTaskStatus, 'working'>;
  statusMessage: string;
  answer: McpTaskAnswer;
}

function answerAad(taskId: string): string {
  return `mcp-task:${taskId}`;
}

/**
 * Records how a working task ended, once: a task already ended (cancelled by its agent a moment
 * before, say) keeps its ending, as the protocol asks of terminal tasks. Every API process hears
 * of it (MCP_TASK_SETTLED_CHANNEL) in the same statement. True when this ended it.
 */
export async function settleMcpTask(
  sql: Db,
  keyring: Keyring,
  id: string,
  ending: TaskEnding,
): Promise<boolean> {
  const rows = await sql`
    with ended as (
      update mcp_tasks set status = ${ending.status}, status_message = ${ending.statusMessage},
        answer = ${seal(keyring, JSON.stringify(ending.answer), answerAad(id))},
        last_updated_at = now()
      where id = ${id} and status = 'working'
      returning id)
    select pg_notify(${MCP_TASK_SETTLED_CHANNEL}, id) from ended`;
  return rows.length > 0;
}

/** The answer an ended task keeps. */
export function taskAnswer(keyring: Keyring, task: Pick<McpTask, 'id' | 'answer'>): McpTaskAnswer {
  if (task.answer === null) throw new Error(`task ${task.id} has no answer yet`);
  return JSON.parse(open(keyring, task.answer, answerAad(task.id))) as McpTaskAnswer;
}

/** A task held anew (its approval was used or lapsed before the retry): it names the new one. */
export async function setMcpTaskApproval(sql: Db, id: string, approvalId: string): Promise<void> {
  await sql`
    update mcp_tasks set approval_id = ${approvalId}, last_updated_at = now()
    where id = ${id} and status = 'working'`;
}

/** What `tasks/cancel` came to. */
export type TaskCancellation =
  | { kind: 'cancelled'; approval: Approval }
  /** The approval was decided first: the call is the approver's now, and runs (or is denied). */
  | { kind: 'decided'; approvalStatus: ApprovalStatus | null }
  /** The task had ended already. */
  | { kind: 'ended' };

/**
 * The agent withdraws its held call: in one transaction, the approval is settled `cancelled`
 * while it is still pending (from then on an approve is refused, whoever sends it, as for a
 * cancelled Nexus operation), the task ends `cancelled` with `ending`, and the audit log gets
 * `audit` naming the approval. An approval decided a moment before wins: nothing changes.
 */
export async function cancelHeldMcpTask(
  sql: Sql,
  keyring: Keyring,
  task: Pick<McpTask, 'id' | 'approvalId'>,
  ending: TaskEnding,
  audit: (approval: Approval) => NewAuditEvent,
): Promise<TaskCancellation> {
  return sql.begin(async (tx): Promise<TaskCancellation> => {
    const [locked]: [{ status: McpTaskStatus }?] = await tx`
      select status from mcp_tasks where id = ${task.id} for update`;
    if (locked?.status !== 'working') return { kind: 'ended' };
    const approval =
      task.approvalId === null
        ? null
        : await settleApproval(tx, task.approvalId, 'cancelled', null);
    if (!approval) {
      const [now]: [{ status: ApprovalStatus }?] = await tx`
        select status from approvals where id = ${task.approvalId}`;
      return { kind: 'decided', approvalStatus: now?.status ?? null };
    }
    await settleMcpTask(tx, keyring, task.id, ending);
    await insertAuditEvents(tx, [audit(approval)]);
    return { kind: 'cancelled', approval };
  });
}
