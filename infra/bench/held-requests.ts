import { randomUUID } from 'node:crypto';
import type { BenchStack } from './stack.js';

/** One held call: the agent's key, the user, and what makes its retry identical. */
export interface HeldCall {
  key: string;
  user: string;
  title: string;
  idempotencyKey: string;
  approvalId?: string;
}

/** The HTTP requests of the held-calls scenario, each as a backend sends it. */
export function heldRequests(stack: BenchStack) {
  const api = stack.config.api.publicUrl;
  const approver = { authorization: `Bearer ${stack.approverKey}` };

  /** `acme.create_task`, a write: the default policy asks, so the first request is held. */
  async function createTask(call: HeldCall): Promise<Response> {
    return fetch(`${api}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${call.key}`,
        'content-type': 'application/json',
        'idempotency-key': call.idempotencyKey,
      },
      body: JSON.stringify({ user: call.user, input: { title: call.title } }),
    });
  }

  return {
    /** Holds the call: true when it was answered 403 approval_required with its approval. */
    async hold(call: HeldCall): Promise<boolean> {
      const response = await createTask(call);
      const body = (await response.json()) as { error?: { approval?: { id?: string } } };
      call.approvalId = body.error?.approval?.id;
      return response.status === 403 && call.approvalId !== undefined;
    },
    /** The identical call again, after its approval: its status (200 when it ran). */
    async retry(call: HeldCall): Promise<number> {
      const response = await createTask(call);
      await response.arrayBuffer();
      return response.status;
    },
    /** Approve or reject as another agent with a full key (four eyes): the status. */
    async decide(call: HeldCall, verb: 'approve' | 'reject'): Promise<number> {
      const response = await fetch(`${api}/v1/approvals/${call.approvalId ?? ''}/${verb}`, {
        method: 'POST',
        headers: approver,
      });
      await response.arrayBuffer();
      return response.status;
    },
    /** One inbox page, as the approvers' UI reads it. */
    async inbox(query: string): Promise<boolean> {
      const response = await fetch(`${api}/v1/approvals?${query}`, { headers: approver });
      const body = (await response.json()) as { data?: unknown[] };
      return response.status === 200 && Array.isArray(body.data) && body.data.length > 0;
    },
    /** An allowed read by the bench's own agent and user: the calls held ones must not slow. */
    async allowedRead(): Promise<boolean> {
      const response = await fetch(`${api}/v1/actions/acme.list_tasks/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack.key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ user: stack.user, input: {} }),
      });
      await response.arrayBuffer();
      return response.status === 200;
    },
    /** How many tasks the demo app holds under each title: the app's own count of writes. */
    async tasksByTitle(): Promise<Map<string, number>> {
      const response = await fetch(`${stack.demo.url}/tasks`, {
        headers: { authorization: `Bearer ${stack.accessToken}` },
      });
      const { tasks } = (await response.json()) as { tasks: { title: string }[] };
      const counts = new Map<string, number>();
      for (const { title } of tasks) counts.set(title, (counts.get(title) ?? 0) + 1);
      return counts;
    },
  };
}
