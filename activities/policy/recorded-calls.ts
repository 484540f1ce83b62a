import type { Db } from '../../infra/database/client.js';
import type { CallRequest } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { PolicySubject } from '../calls/policy-verdict.js';
import { UNSTORABLE_PREFIX } from '../db/storable.js';
import { conditionContext, type ConditionContext } from './conditions.js';

/**
 * The audited calls a policy simulation replays: the rows a policy judged, read back
 * as the calls they record. A row is a call when it names a policy version (refused calls,
 * connection stops, tool pinning, registry events and Idempotency-Key replays name none) and
 * every row of one held call (its first request, the repeats answered while it waited, the run
 * after its approval) shares the call's approval: those count once, as the earliest of them read.
 */
export interface RecordedCall {
  /** The audit event's id: what samples name. */
  id: string;
  time: Date;
  /** `<app>.<name>`, or `<app>.proxy`. */
  action: string;
  scope: CallScope;
  agentId: string;
  via: string;
  userExternalId: string;
  approvalId: string | null;
  /** As audit keeps it: `{action, user, via, input}`, or the proxy's method, path and query. */
  request: Record<string, unknown>;
}

/** Which calls to read: the newest `last`, within `since` ≤ time < `until` when given. */
export interface CallWindow {
  since: Date | null;
  until: Date | null;
  last: number;
}

/**
 * Whose calls: the agents `named`, and, for each list in `allBut`, every agent not in it (a
 * policy for `*` governs every agent no other policy names).
 */
export interface AgentSelection {
  named: string[];
  allBut: string[][];
}

/** Rows read at a time: calls are counted after a held call's rows are merged into one. */
const PAGE_ROWS = 2500;

function whoseCalls(sql: Db, agents: AgentSelection) {
  let clause = sql`agent_id = any(${agents.named}::text[])`;
  for (const list of agents.allBut) clause = sql`${clause} or agent_id <> all(${list}::text[])`;
  return sql`(${clause})`;
}

async function page(
  sql: Db,
  environmentId: string,
  window: CallWindow,
  agents: AgentSelection,
  before: string | null,
): Promise<RecordedCall[]> {
  return sql<RecordedCall[]>`
    select id, time, action, scope, agent_id, via, user_external_id, approval_id, request
    from audit_events
    where environment_id = ${environmentId}
      and policy_id is not null and scope is not null and user_external_id is not null
      and (reason is null or reason not like 'replayed: %')
      and ${whoseCalls(sql, agents)}
      ${window.since === null ? sql`` : sql`and time >= ${window.since}`}
      ${window.until === null ? sql`` : sql`and time < ${window.until}`}
      ${before === null ? sql`` : sql`and id < ${before}`}
    order by id desc
    limit ${PAGE_ROWS}`;
}

/**
 * The newest calls of the window, newest first, at most `window.last`; `more` when the window
 * holds more. Read by pages along the audit's (environment, id) index, so the cost follows the
 * calls asked for, not the size of the log.
 */
export async function readRecordedCalls(
  sql: Db,
  environmentId: string,
  window: CallWindow,
  agents: AgentSelection,
): Promise<{ calls: RecordedCall[]; more: boolean }> {
  const calls: RecordedCall[] = [];
  /** Where each held call's row stands in `calls`, by approval. */
  const heldAt = new Map<string, number>();
  let before: string | null = null;
  for (;;) {
    const rows = await page(sql, environmentId, window, agents, before);
    for (const row of rows) {
      const at = row.approvalId === null ? undefined : heldAt.get(row.approvalId);
      if (at !== undefined) {
        // An earlier row of the same held call: the call is its first request.
        calls[at] = row;
        continue;
      }
      if (calls.length === window.last) return { calls, more: true };
      if (row.approvalId !== null) heldAt.set(row.approvalId, calls.length);
      calls.push(row);
    }
    const last = rows.at(-1);
    if (rows.length < PAGE_ROWS || !last) return { calls, more: false };
    before = last.id;
  }
}

/** A string audit kept in its storable form (../db/storable.ts), as the caller sent it. */
function original(value: unknown): unknown {
  if (typeof value === 'string') {
    if (!value.startsWith(UNSTORABLE_PREFIX)) return value;
    try {
      return JSON.parse(`"${value.slice(UNSTORABLE_PREFIX.length)}"`) as unknown;
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map(original);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [original(key) as string, original(child)]),
  );
}

const isProxy = (call: RecordedCall) =>
  call.action.endsWith('.proxy') && typeof call.request.method === 'string';

/** `<app>` of `<app>.<name>`: app ids hold no dot. */
const appOf = (action: string) => action.slice(0, Math.max(0, action.indexOf('.')));

/** What policy decides on, as the live call's was. */
export function recordedSubject(call: RecordedCall): PolicySubject {
  return { app: appOf(call.action), scope: call.scope, action: isProxy(call) ? null : call.action };
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/**
 * The variables a condition reads, made by the code that makes a live call's (conditions.ts), from
 * the call as audit kept it, with `now` the moment it was recorded. Audit keeps no proxy headers:
 * `request` has no `headers` key, so a condition reading them cannot be judged (CEL's "No such
 * key"), never quietly false. An action's `input` is what the action validated.
 */
export function recordedContext(call: RecordedCall): ConditionContext {
  const app = appOf(call.action);
  const request: CallRequest = {
    environmentId: '',
    environmentName: '',
    agentId: call.agentId,
    userExternalId: call.userExternalId,
    via: 'api',
    fingerprint: '',
    retryWindowSeconds: 0,
    target: isProxy(call)
      ? {
          kind: 'proxy',
          app,
          scope: call.scope,
          method: text(call.request.method),
          path: text(original(call.request.path)),
          query: text(original(call.request.query)),
          headers: {},
          bodyBase64: null,
        }
      : {
          kind: 'action',
          action: call.action,
          app,
          scope: call.scope,
          input: original(call.request.input) ?? {},
        },
  };
  const context = conditionContext(request, call.time);
  const kept = { ...(context.request as Record<string, unknown>) };
  if (isProxy(call)) delete kept.headers;
  return { ...context, via: call.via, request: kept };
}
