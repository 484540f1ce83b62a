import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCallerStack, type CallerStack } from '../../test/nexus/caller-stack.js';
import type { runThroughGatehouse } from '../../test/nexus/caller-workflows.js';
import { createLogger } from '../logger.js';
import { installTemporalRuntime } from '../temporal/runtime.js';
import { startApprovalPerson, type ApprovalPerson } from './approval-person.js';
import { summarize, type Measurement } from './measure.js';
import type { BenchStack } from './stack.js';

/** The three ways a backend gets a held call's approved result. */
export const APPROVAL_WAYS = {
  webhookRetry: 'retry after webhook',
  preferWait: 'Prefer: wait=30',
  nexus: 'Nexus runAction',
} as const;

export type ApprovalWay = keyof typeof APPROVAL_WAYS;
export type ApprovalWays = Record<ApprovalWay, Measurement>;

/** Longer than any round trip that is not broken: past it the round counts as an error. */
const DECISION_TIMEOUT_MS = 30_000;
/** Unmeasured rounds of each way first: bundles, connections and JIT warm. */
const WARMUP_ROUNDS = 3;

interface RunAnswer {
  status: number;
  body: { ok?: unknown; error?: { approval?: { id?: string } } };
}

/**
 * One held call's round trip each way: from the backend's first request to its having the
 * approved result, the approval decided by the person (./approval-person.ts) the moment
 * `approval.requested` announces it, the same in every way. Each call is `acme.create_task`
 * with a fresh Idempotency-Key (a new held call, a new approval).
 */
function roundTrips(
  stack: BenchStack,
  person: ApprovalPerson,
  caller: CallerStack,
): Record<ApprovalWay, () => Promise<boolean>> {
  const api = stack.apiUrls[0] ?? '';
  const run = async (key: string, title: string, extra: Record<string, string> = {}) => {
    const response = await fetch(`${api}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.key}`,
        'content-type': 'application/json',
        'idempotency-key': key,
        ...extra,
      },
      body: JSON.stringify({ user: stack.user, input: { title } }),
    });
    return { status: response.status, body: (await response.json()) as RunAnswer['body'] };
  };
  return {
    /** Held (403 approval_required) → `approval.decided` at the receiver → the identical retry. */
    async webhookRetry() {
      const key = randomUUID();
      const held = await run(key, `bench webhook ${key}`);
      const approvalId = held.body.error?.approval?.id;
      if (held.status !== 403 || approvalId === undefined) return false;
      await person.decided(approvalId, DECISION_TIMEOUT_MS);
      const retried = await run(key, `bench webhook ${key}`);
      return retried.status === 200 && retried.body.ok === true;
    },
    /** One request that waits in the call workflow and answers the approved call's result. */
    async preferWait() {
      const key = randomUUID();
      const answer = await run(key, `bench wait ${key}`, { prefer: 'wait=30' });
      return answer.status === 200 && answer.body.ok === true;
    },
    /** A caller workflow in another namespace runs the operation; its result is the app's. */
    async nexus() {
      const result = await caller.client.workflow.execute<typeof runThroughGatehouse>(
        'runThroughGatehouse',
        {
          taskQueue: caller.taskQueue,
          workflowId: `bench-caller-${randomUUID()}`,
          args: [
            caller.endpoint,
            {
              action: 'acme.create_task',
              user: stack.user,
              input: { title: `bench nexus ${randomUUID()}` },
            },
          ],
        },
      );
      return result.ok;
    },
  };
}

/**
 * The approval round trip three ways side by side. The ways take turns round by
 * round, so a drift of the machine's load during the run falls on all three alike. The Nexus
 * caller (its own namespace, endpoint and worker, as test/nexus sets them up) runs in this
 * process, beside the load generator, as the webhook receiver does.
 */
export async function approvalWaysScenario(
  stack: BenchStack,
  rounds: number,
  progress: (line: string) => void,
): Promise<ApprovalWays & { personFailures: number }> {
  progress('approval round trip three ways: a Nexus caller namespace, endpoint and worker');
  try {
    installTemporalRuntime(createLogger({ level: 'error' }), { handleSignals: false });
  } catch {
    // Installed already: this process made a worker before.
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bench-caller-'));
  const person = await startApprovalPerson({
    apiUrl: stack.apiUrls[0] ?? '',
    approverKey: stack.approverKey,
  });
  const caller = await startCallerStack(stack.config, stack.key, { dir });
  try {
    const ways = roundTrips(stack, person, caller);
    const names = Object.keys(APPROVAL_WAYS) as ApprovalWay[];
    for (let i = 0; i < WARMUP_ROUNDS; i++) {
      for (const name of names) await ways[name]().catch(() => false);
    }
    progress(
      `approval round trip three ways: ${String(rounds)} rounds, person approves on approval.requested`,
    );
    const samples = { webhookRetry: [], preferWait: [], nexus: [] } as Record<
      ApprovalWay,
      number[]
    >;
    const errors = { webhookRetry: 0, preferWait: 0, nexus: 0 };
    for (let i = 0; i < rounds; i++) {
      for (const name of names) {
        const t0 = performance.now();
        const ok = await ways[name]().catch(() => false);
        if (ok) samples[name].push(performance.now() - t0);
        else errors[name]++;
      }
    }
    const of = (name: ApprovalWay) => {
      const elapsed = samples[name].reduce((sum, ms) => sum + ms, 0);
      return summarize(samples[name], errors[name], elapsed);
    };
    return {
      webhookRetry: of('webhookRetry'),
      preferWait: of('preferWait'),
      nexus: of('nexus'),
      personFailures: person.failures,
    };
  } finally {
    await caller.stop();
    await person.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
