import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { performance } from 'node:perf_hooks';
import type { BenchStack } from './stack.js';
import { floorCall } from './engine-floor.js';
import { measure, summarize, type Measurement, type Request } from './measure.js';
import { cpuByRole, cpuPerCall, type CpuMs } from './process-cpu.js';
import { transactions } from './postgres-stats.js';

export interface Settings {
  warmup: number;
  latencyRequests: number;
  approvalRounds: number;
  throughputSeconds: number;
  /** Allowed action runs at each. */
  concurrencies: number[];
  /** The engine floor, actions and the proxy side by side at each. */
  comparedConcurrencies: number[];
  stormSize: number;
}

/** What one call cost the machine during a throughput run, by process. */
export interface Cost {
  cpuMsPerCall: CpuMs & { total: number };
  /** Transactions per call in the service's database (every autocommit statement is one). */
  postgresTransactionsPerCall: number;
}

export type Throughput = Measurement & { concurrency: number; cost: Cost };

export interface Results {
  direct: Measurement;
  /** An empty update-with-start workflow: the engine's own round trip, Gatehouse's floor. */
  floor: Measurement;
  action: Measurement;
  /** The same allowed read as `action`, as an MCP client sends it: `tools/call`. */
  mcp: Measurement;
  proxy: Measurement;
  /** A remote MCP server's tool as an action: `everything.echo`, a whole call. */
  remoteTool: Measurement;
  /** The same `tools/call` sent to the server itself, as the call's upstream step sends it. */
  directTool: Measurement;
  approvalRoundTrip: Measurement;
  throughput: {
    floor: Throughput[];
    action: Throughput[];
    proxy: Throughput[];
    remoteTool: Throughput[];
  };
  refreshStorm: Measurement & { tokenRequests: number };
}

/**
 * The calls a benchmark makes. Every governed call carries a fresh Idempotency-Key: identical
 * calls would share one open workflow, and the point is the cost of a whole call.
 */
function client(stack: BenchStack) {
  const auth = { authorization: `Bearer ${stack.key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  // With several API processes (--scale-out), requests take turns, as behind a load balancer.
  let turn = 0;
  const api = () => stack.apiUrls[turn++ % stack.apiUrls.length] ?? '';
  return {
    async direct(): Promise<boolean> {
      const response = await fetch(`${stack.demo.url}/tasks`, {
        headers: { authorization: `Bearer ${stack.accessToken}` },
      });
      await response.arrayBuffer();
      return response.status === 200;
    },
    async run(action: string, input: object, key: string = randomUUID()): Promise<number> {
      const response = await fetch(`${api()}/v1/actions/${action}/run`, {
        method: 'POST',
        headers: { ...json, 'idempotency-key': key },
        body: JSON.stringify({ user: stack.user, input }),
      });
      await response.arrayBuffer();
      return response.status;
    },
    /** An MCP session for the user, minted as a backend would for its agent. */
    async mcpSession(): Promise<string> {
      const response = await fetch(`${api()}/v1/mcp/sessions`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ user: stack.user }),
      });
      const { url } = (await response.json()) as { url: string };
      return url;
    },
    /**
     * One `tools/call` as any Streamable HTTP client posts it. The server is stateless, so no
     * `initialize` is needed per call; the Idempotency-Key makes each call a whole workflow, as
     * for the runs.
     */
    async mcpRead(url: string, id: number): Promise<boolean> {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'acme__list_tasks', arguments: {} },
        }),
      });
      // One SSE event carries the result: `data: {"jsonrpc":"2.0","id":…,"result":…}`.
      const data = /^data: (.+)$/m.exec(await response.text())?.[1];
      if (response.status !== 200 || data === undefined) return false;
      const message = JSON.parse(data) as { result?: { structuredContent?: { ok?: unknown } } };
      return message.result?.structuredContent?.ok === true;
    },
    /** `everything.echo` through Gatehouse: policy, workflow, audit, then tools/call. */
    async remoteTool(): Promise<boolean> {
      const response = await fetch(`${api()}/v1/actions/everything.echo/run`, {
        method: 'POST',
        headers: { ...json, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ user: stack.user, input: { message: 'bench' } }),
      });
      const body = (await response.json()) as { ok?: unknown };
      return response.status === 200 && body.ok === true;
    },
    /**
     * The same tool called directly with the SDK's client, as Gatehouse's upstream step calls it:
     * initialize, tools/call, close (no MCP session outlives a call there either).
     */
    async directTool(): Promise<boolean> {
      const mcp = new Client({ name: 'gatehouse-bench', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(stack.mcpServerUrl)));
      try {
        const result = await mcp.callTool({ name: 'echo', arguments: { message: 'bench' } });
        return result.isError !== true;
      } finally {
        await mcp.close();
      }
    },
    async proxy(): Promise<boolean> {
      const response = await fetch(`${api()}/v1/proxy/acme/tasks`, {
        headers: { ...auth, 'service-user': stack.user, 'idempotency-key': randomUUID() },
      });
      await response.arrayBuffer();
      return response.status === 200;
    },
    async heldApprovalId(key: string): Promise<string | null> {
      const response = await fetch(`${api()}/v1/actions/acme.create_task/run`, {
        method: 'POST',
        headers: { ...json, 'idempotency-key': key },
        body: JSON.stringify({ user: stack.user, input: { title: `bench ${key}` } }),
      });
      const body = (await response.json()) as { error?: { approval?: { id: string } } };
      return body.error?.approval?.id ?? null;
    },
    /** Four eyes: the agent whose call is held cannot decide it. */
    async approve(id: string): Promise<boolean> {
      const response = await fetch(`${api()}/v1/approvals/${id}/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.approverKey}` },
      });
      await response.arrayBuffer();
      return response.status === 200;
    },
  };
}

const read = (c: ReturnType<typeof client>) => async () =>
  (await c.run('acme.list_tasks', {})) === 200;

/** A measurement, with what its calls cost each process of the stack. */
export async function measureWithCost(
  stack: BenchStack,
  request: Request,
  options: Parameters<typeof measure>[1],
): Promise<Measurement & { cost: Cost }> {
  const [cpuBefore, txBefore] = [await cpuByRole(), await transactions(stack.sql)];
  const result = await measure(request, options);
  const [cpuAfter, txAfter] = [await cpuByRole(), await transactions(stack.sql)];
  // The two statistics reads are this benchmark's own.
  const tx = Math.max(0, txAfter - txBefore - 2);
  return {
    ...result,
    cost: {
      cpuMsPerCall: cpuPerCall(cpuBefore, cpuAfter, result.requests),
      postgresTransactionsPerCall:
        result.requests === 0 ? 0 : Math.round((tx / result.requests) * 100) / 100,
    },
  };
}

/** A throughput run, with what its calls cost each process of the stack. */
async function throughputOf(
  stack: BenchStack,
  request: Request,
  concurrency: number,
  seconds: number,
): Promise<Throughput> {
  return {
    concurrency,
    ...(await measureWithCost(stack, request, { concurrency, durationMs: seconds * 1000 })),
  };
}

export async function runScenarios(
  stack: BenchStack,
  settings: Settings,
  progress: (line: string) => void,
): Promise<Results> {
  const c = client(stack);
  const floorRequest = floorCall(stack.temporal, stack.config.temporal.taskQueue);
  const sequential = { concurrency: 1, count: settings.latencyRequests };
  const mcpUrl = await c.mcpSession();

  progress('warming up');
  await measure(() => c.direct(), { concurrency: 4, count: settings.warmup });
  await measure(floorRequest, { concurrency: 4, count: settings.warmup });
  await measure(read(c), { concurrency: 4, count: settings.warmup });
  await measure(() => c.proxy(), { concurrency: 4, count: settings.warmup });
  await measure((i) => c.mcpRead(mcpUrl, i), { concurrency: 4, count: settings.warmup });
  await measure(() => c.directTool(), { concurrency: 4, count: settings.warmup });
  await measure(() => c.remoteTool(), { concurrency: 4, count: settings.warmup });

  progress('direct: the demo app with a valid token');
  const direct = await measure(() => c.direct(), sequential);
  progress('engine floor: an empty workflow by update-with-start');
  const floor = await measure(floorRequest, sequential);
  progress('action, allowed: POST /v1/actions/acme.list_tasks/run');
  const action = await measure(read(c), sequential);
  progress('MCP, allowed: tools/call acme__list_tasks');
  const mcp = await measure((i) => c.mcpRead(mcpUrl, i), sequential);
  progress('proxy, allowed: GET /v1/proxy/acme/tasks');
  const proxy = await measure(() => c.proxy(), sequential);
  progress('remote MCP tool, direct: tools/call echo at server-everything');
  const directTool = await measure(() => c.directTool(), sequential);
  progress('remote MCP tool, allowed: POST /v1/actions/everything.echo/run');
  const remoteTool = await measure(() => c.remoteTool(), sequential);

  progress('approval round trip: approve → retry answered');
  const rounds: number[] = [];
  let roundErrors = 0;
  const roundsStarted = performance.now();
  for (let i = 0; i < settings.approvalRounds; i++) {
    const key = randomUUID();
    const id = await c.heldApprovalId(key);
    if (!id) {
      roundErrors++;
      continue;
    }
    const t0 = performance.now();
    const approved = await c.approve(id);
    const status = await c.run('acme.create_task', { title: `bench ${key}` }, key);
    rounds.push(performance.now() - t0);
    if (!approved || status !== 200) roundErrors++;
  }
  const approvalRoundTrip = summarize(rounds, roundErrors, performance.now() - roundsStarted);

  const throughput: Results['throughput'] = { floor: [], action: [], proxy: [], remoteTool: [] };
  const seconds = settings.throughputSeconds;
  for (const concurrency of settings.comparedConcurrencies) {
    progress(`throughput at concurrency ${String(concurrency)}: floor, action, proxy`);
    throughput.floor.push(await throughputOf(stack, floorRequest, concurrency, seconds));
    throughput.action.push(await throughputOf(stack, read(c), concurrency, seconds));
    throughput.proxy.push(await throughputOf(stack, () => c.proxy(), concurrency, seconds));
  }
  const remoteConcurrency = settings.comparedConcurrencies[0] ?? 8;
  progress(`throughput at concurrency ${String(remoteConcurrency)}: remote MCP tool`);
  throughput.remoteTool.push(
    await throughputOf(stack, () => c.remoteTool(), remoteConcurrency, seconds),
  );
  for (const concurrency of settings.concurrencies) {
    if (settings.comparedConcurrencies.includes(concurrency)) continue;
    progress(`throughput: allowed runs at concurrency ${String(concurrency)}`);
    throughput.action.push(await throughputOf(stack, read(c), concurrency, seconds));
  }
  throughput.action.sort((a, b) => a.concurrency - b.concurrency);

  progress(`refresh storm: ${String(settings.stormSize)} concurrent calls on an expired token`);
  await stack.sql`
    update connections set access_token_expires_at = now() - interval '1 second'
    where id = ${stack.connectionId}`;
  const before = stack.demo.stats().tokenRequests.refresh_token;
  const storm = await measure(read(c), {
    concurrency: settings.stormSize,
    count: settings.stormSize,
  });
  const tokenRequests = stack.demo.stats().tokenRequests.refresh_token - before;

  return {
    direct,
    floor,
    action,
    mcp,
    proxy,
    remoteTool,
    directTool,
    approvalRoundTrip,
    throughput,
    refreshStorm: { ...storm, tokenRequests },
  };
}
