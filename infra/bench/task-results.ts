import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { rssByRole } from './process-memory.js';
import { summarize, type Measurement } from './measure.js';
import type { BenchStack } from './stack.js';

/**
 * What waiting MCP clients cost (`--only tasks`): one held `acme.create_task` made as an MCP task,
 * then `waiters` clients each holding a `tasks/result` open on it at once, as impatient clients
 * would. Measured: the API process's resident memory before and while they wait (what each
 * waiting request costs it), and, once the approver approves, how long each client takes to get
 * the app's answer: one run reaches the app, and one NOTIFY wakes every waiting request.
 */
export interface TaskResultsResult {
  waiters: number;
  /** The API process's RSS (MB) with the task held and nobody waiting. */
  rssBeforeMb: number;
  /** The same with every `tasks/result` open. */
  rssWaitingMb: number;
  /** (rssWaiting − rssBefore) ÷ waiters, in KB: an upper bound, since RSS also counts garbage. */
  kbPerWaiter: number;
  /** From the approve request's answer to each client's result. */
  approvedToResult: Measurement;
  /** Results that were the app's answer. */
  answered: number;
  /** How many tasks the app holds with the task's title afterwards: 1. */
  writes: number;
}

interface JsonRpcAnswer {
  id?: unknown;
  result?: { task?: { taskId?: string }; structuredContent?: { ok?: unknown } };
  error?: { message?: string };
}

/** One JSON-RPC request to the stateless MCP endpoint; the answer is one SSE event or JSON. */
function rpc(
  url: string,
  body: object,
): { headers: Promise<void>; answer: Promise<JsonRpcAnswer> } {
  let headersArrived: () => void = () => undefined;
  const headers = new Promise<void>((resolve) => {
    headersArrived = resolve;
  });
  const answer = (async () => {
    // Node's fetch opens as many connections to one origin as there are requests in flight,
    // as a thousand separate clients would.
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
    headersArrived();
    const text = await response.text();
    // An SSE stream may carry notifications (a task's status) before the answer, which has an id.
    const events = [...text.matchAll(/^data: (.+)$/gm)].map(
      (match) => JSON.parse(match[1] ?? 'null') as JsonRpcAnswer & { id?: unknown },
    );
    const answer = events.find((event) => event.id !== undefined);
    return answer ?? (JSON.parse(text) as JsonRpcAnswer);
  })();
  answer.catch(() => {
    headersArrived();
  });
  return { headers, answer };
}

export async function taskResultsScenario(
  stack: BenchStack,
  waiters: number,
  log: (line: string) => void,
): Promise<TaskResultsResult> {
  const api = stack.apiUrls[0] ?? '';
  const minted = await fetch(`${api}/v1/mcp/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user: stack.user }),
  });
  const { url } = (await minted.json()) as { url: string };
  const session = new URL(new URL(url).pathname, api).toString();
  const title = `waited ${randomUUID()}`;
  const created = await rpc(session, {
    id: 1,
    method: 'tools/call',
    params: { name: 'acme__create_task', arguments: { title }, task: { ttl: 600_000 } },
  }).answer;
  const taskId = created.result?.task?.taskId;
  if (!taskId) throw new Error(`no task: ${JSON.stringify(created)}`);
  const [approval] = await stack.sql<{ approvalId: string }[]>`
    select approval_id from mcp_tasks where id = ${taskId}`;
  if (!approval) throw new Error('the task has no approval');

  const rssBeforeMb = (await rssByRole()).api;
  log(`task results: ${String(waiters)} clients wait on one held task`);
  const waiting = Array.from({ length: waiters }, (_, i) =>
    rpc(session, { id: i + 2, method: 'tasks/result', params: { taskId } }),
  );
  // Each answer's headers come once the request reached the MCP transport.
  await Promise.all(waiting.map((one) => one.headers));
  const rssWaitingMb = (await rssByRole()).api;

  const decided = await fetch(`${api}/v1/approvals/${approval.approvalId}/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.approverKey}` },
  });
  if (decided.status !== 200) throw new Error(`approve: ${String(decided.status)}`);
  const approvedAt = performance.now();
  const samples: number[] = [];
  let answered = 0;
  let errors = 0;
  const reasons = new Set<string>();
  await Promise.all(
    waiting.map(async (one) => {
      try {
        const answer = await one.answer;
        samples.push(performance.now() - approvedAt);
        if (answer.result?.structuredContent?.ok === true) {
          answered += 1;
        } else {
          errors += 1;
          reasons.add(JSON.stringify(answer.error ?? answer.result).slice(0, 200));
        }
      } catch (error) {
        errors += 1;
        reasons.add(String(error).slice(0, 200));
      }
    }),
  );
  const elapsed = performance.now() - approvedAt;
  for (const reason of reasons) log(`a client got no result: ${reason}`);
  const listed = await fetch(`${api}/v1/actions/acme.list_tasks/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user: stack.user, input: {} }),
  });
  const { data } = (await listed.json()) as { data: { tasks: { title: string }[] } };
  return {
    waiters,
    rssBeforeMb,
    rssWaitingMb,
    kbPerWaiter: ((rssWaitingMb - rssBeforeMb) * 1024) / waiters,
    approvedToResult: summarize(samples, errors, elapsed),
    answered,
    writes: data.tasks.filter((task) => task.title === title).length,
  };
}

export function taskResultsTable(result: TaskResultsResult): string {
  const m = result.approvedToResult;
  return [
    `MCP tasks/result, ${String(result.waiters)} clients waiting on one held task`,
    `  API RSS: ${result.rssBeforeMb.toFixed(1)} MB → ${result.rssWaitingMb.toFixed(1)} MB while waiting (${result.kbPerWaiter.toFixed(1)} KB per waiting request, at most)`,
    `  approve → result: p50 ${m.p50.toFixed(1)} ms, p90 ${m.p90.toFixed(1)}, p99 ${m.p99.toFixed(1)}, max ${m.max.toFixed(1)}; answered ${String(result.answered)}, errors ${String(m.errors)}`,
    `  the app's tasks with that title: ${String(result.writes)}`,
    '',
  ].join('\n');
}
