import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { findOpenApiApp, findOpenApiOperationStanding } from '../../activities/db/openapi-apps.js';
import { ensureOctokitOpenApi, OCTOKIT_OPENAPI_VERSION } from '../tools/openapi-documents.js';
import { PRISM_VERSION } from '../tools/prism-cli.js';
import { startPrism, type PrismServer } from '../tools/prism-server.js';
import { ratio } from './columns.js';
import { measure, type Measurement, type Request } from './measure.js';
import { measureWithCost, type Cost, type Settings } from './scenarios.js';
import type { BenchStack } from './stack.js';

/**
 * What governing an imported REST operation costs (`--only openapi-call`): GitHub's published
 * description registered as the OpenAPI app `github-api` through `POST /v1/openapi-apps`, its base
 * URL Stoplight Prism serving the same description on loopback, and one unauthenticated read
 * (`GET /repos/{owner}/{repo}/issues`, which the description, like all of its operations, lists
 * with no security requirement) called two ways, each answered by Prism with the document's
 * example (5 issues, about 6 KB of JSON):
 *
 * - **through Gatehouse**: `POST /v1/actions/github-api.issues_list_for_repo/run`, a whole call
 *   (authentication, input checked against the operation's schema, policy, the call workflow,
 *   the request built from the accepted snapshot, the audit row), allowed as a read;
 * - **directly**: the same `GET` sent to Prism, the request the call's upstream step sends.
 *
 * Each one at a time (`latencyRequests` calls) and at concurrency 8 for `throughputSeconds`.
 * Prism checks every request against the document, so both sides pay for Prism's validation and
 * answer: the difference is Gatehouse's. For reference in the same run, on the same stack: the
 * catalog read `acme.list_tasks` one at a time, and what each call cost the stack's processes
 * (CPU by process, Postgres transactions), so that what an imported operation adds to a call is
 * told apart from what every call costs. And, to tell where that goes, the stored snapshot's size
 * and the one read each step of a call makes of it (the API's check of the input, the call's
 * preparation and its upstream step each read the operation's standing), timed alone.
 */
export interface OpenApiCallResult {
  document: string;
  prism: string;
  action: string;
  request: string;
  /** The answer's size, bytes of JSON. */
  responseBytes: number;
  /** `POST /v1/openapi-apps` with `document_url`: fetching, importing and storing, seconds. */
  registerSeconds: number;
  direct: Measurement;
  gatehouse: Measurement & { cost: Cost };
  /** The catalog read `acme.list_tasks` through Gatehouse, one at a time. */
  catalog: Measurement & { cost: Cost };
  /** The app's snapshot row: its descriptors and pinned operations, as stored and as JSON text. */
  snapshot: { storedMb: number; textMb: number };
  /** One read of the operation's standing (`findOpenApiOperationStanding`), one at a time. */
  standingRead: Measurement;
  /** For scale: one read of the app's row alone (`findOpenApiApp`). */
  appRead: Measurement;
  concurrency: number;
  directConcurrent: Measurement;
  gatehouseConcurrent: Measurement;
  ratios: {
    p50: number;
    p95: number;
    p99: number;
    overheadP50Ms: number;
    /** Gatehouse's calls/s ÷ Prism's directly, at `concurrency`. */
    throughputConcurrent: number;
  };
}

const APP = 'github-api';
const ACTION = `${APP}.issues_list_for_repo`;
const OWNER = 'octocat';
const REPO = 'hello-world';
const QUERY = { state: 'open', per_page: 5 };
const PATH = `/repos/${OWNER}/${REPO}/issues?state=${QUERY.state}&per_page=${String(QUERY.per_page)}`;

/**
 * The description on loopback for `document_url`: at 13 MB it is past the API's body limit, so it
 * cannot be sent inline, as an operator registering GitHub would find too.
 */
async function serveDocument(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/github.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}/github.json`,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
      }),
  };
}

async function register(stack: BenchStack, documentUrl: string, baseUrl: string): Promise<void> {
  const response = await fetch(`${stack.apiUrls[0] ?? ''}/v1/openapi-apps`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.approverKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: APP,
      name: 'GitHub REST',
      document_url: documentUrl,
      base_url: baseUrl,
    }),
  });
  if (response.status !== 200) {
    throw new Error(`registering GitHub's description failed: ${await response.text()}`);
  }
  await response.arrayBuffer();
}

/** The two ways to send the read; each answers the issues it got, or null for any failure. */
function callers(stack: BenchStack, prism: PrismServer) {
  let turn = 0;
  const api = () => stack.apiUrls[turn++ % stack.apiUrls.length] ?? '';
  return {
    async gatehouse(): Promise<unknown[] | null> {
      const response = await fetch(`${api()}/v1/actions/${ACTION}/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack.key}`,
          'content-type': 'application/json',
          // Identical calls in flight share one run: each must be a whole call of its own.
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({
          user: stack.user,
          input: { path: { owner: OWNER, repo: REPO }, query: QUERY },
        }),
      });
      const body = (await response.json()) as { ok?: unknown; data?: unknown };
      return response.status === 200 && body.ok === true && Array.isArray(body.data)
        ? body.data
        : null;
    },
    async catalog(): Promise<boolean> {
      const response = await fetch(`${api()}/v1/actions/acme.list_tasks/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${stack.key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ user: stack.user, input: {} }),
      });
      const body = (await response.json()) as { ok?: unknown };
      return response.status === 200 && body.ok === true;
    },
    async direct(): Promise<unknown[] | null> {
      const response = await fetch(`${prism.url}${PATH}`, {
        headers: { accept: 'application/json' },
      });
      const body: unknown = await response.json();
      return response.status === 200 && Array.isArray(body) ? body : null;
    },
  };
}

export async function openApiCallScenario(
  stack: BenchStack,
  settings: Settings,
  log: (line: string) => void,
): Promise<OpenApiCallResult> {
  log('fetching the OpenAPI material (cached after the first time)');
  const github = await ensureOctokitOpenApi();
  log(`starting Prism on GitHub's description`);
  const prism = await startPrism(github.bundled);
  try {
    const served = await serveDocument(github.bundled);
    const registerStarted = performance.now();
    try {
      log(`registering it as the OpenAPI app ${APP} (document_url, base URL Prism)`);
      await register(stack, served.url, prism.url);
    } finally {
      await served.close();
    }
    const registerSeconds = (performance.now() - registerStarted) / 1000;

    const { snapshot, standingRead, appRead } = await snapshotReads(stack, settings, log);
    const call = callers(stack, prism);
    // Both must be the same read answered the same, or the comparison means nothing.
    const [through, direct] = [await call.gatehouse(), await call.direct()];
    if (through === null || direct === null || !isDeepStrictEqual(through, direct)) {
      throw new Error(
        `${ACTION} through Gatehouse and ${PATH} at Prism did not answer the same issues:\n` +
          `${JSON.stringify(through).slice(0, 300)}\n${JSON.stringify(direct).slice(0, 300)}`,
      );
    }
    const gatehouse: Request = async () => (await call.gatehouse()) !== null;
    const prismDirect: Request = async () => (await call.direct()) !== null;
    const catalogRead: Request = () => call.catalog();

    log('warming up');
    await measure(prismDirect, { concurrency: 4, count: settings.warmup });
    await measure(gatehouse, { concurrency: 4, count: settings.warmup });
    await measure(catalogRead, { concurrency: 4, count: settings.warmup });

    const sequential = { concurrency: 1, count: settings.latencyRequests };
    log(`direct: GET ${PATH} at Prism, one at a time`);
    const directOne = await measure(prismDirect, sequential);
    log(`through Gatehouse: POST /v1/actions/${ACTION}/run, one at a time`);
    const gatehouseOne = await measureWithCost(stack, gatehouse, sequential);
    log('for reference, a catalog read: POST /v1/actions/acme.list_tasks/run, one at a time');
    const catalog = await measureWithCost(stack, catalogRead, sequential);

    const concurrency = settings.comparedConcurrencies[0] ?? 8;
    const concurrent = { concurrency, durationMs: settings.throughputSeconds * 1000 };
    log(`direct at concurrency ${String(concurrency)}`);
    const directConcurrent = await measure(prismDirect, concurrent);
    log(`through Gatehouse at concurrency ${String(concurrency)}`);
    const gatehouseConcurrent = await measure(gatehouse, concurrent);

    return {
      document: `@octokit/openapi ${OCTOKIT_OPENAPI_VERSION} (api.github.com)`,
      prism: `@stoplight/prism-cli ${PRISM_VERSION}, mock mode, the document's examples`,
      action: ACTION,
      request: `GET ${PATH}`,
      responseBytes: Buffer.byteLength(JSON.stringify(direct)),
      registerSeconds: Math.round(registerSeconds * 10) / 10,
      direct: directOne,
      gatehouse: gatehouseOne,
      catalog,
      snapshot,
      standingRead,
      appRead,
      concurrency,
      directConcurrent,
      gatehouseConcurrent,
      ratios: {
        p50: ratio(gatehouseOne.p50, directOne.p50),
        p95: ratio(gatehouseOne.p95, directOne.p95),
        p99: ratio(gatehouseOne.p99, directOne.p99),
        overheadP50Ms: Math.round((gatehouseOne.p50 - directOne.p50) * 1000) / 1000,
        throughputConcurrent: ratio(gatehouseConcurrent.throughput, directConcurrent.throughput),
      },
    };
  } finally {
    await prism.stop();
  }
}

/** The snapshot's size, and the read of it each step of a call makes, timed alone. */
async function snapshotReads(
  stack: BenchStack,
  settings: Settings,
  log: (line: string) => void,
): Promise<Pick<OpenApiCallResult, 'snapshot' | 'standingRead' | 'appRead'>> {
  const environment = await findEnvironmentByName(stack.sql, 'bench');
  if (!environment) throw new Error('the bench environment is missing');
  const [row]: [{ stored: number; text: number }?] = await stack.sql`
    select pg_column_size(descriptors) + pg_column_size(operations) as stored,
      octet_length(descriptors::text) + octet_length(operations::text) as text
    from openapi_app_snapshots where environment_id = ${environment.id} and app_id = ${APP}
    order by version desc limit 1`;
  const mb = (bytes: number | undefined) => Math.round(((bytes ?? 0) / (1024 * 1024)) * 10) / 10;
  const count = Math.min(100, settings.latencyRequests);
  log(`one read of ${ACTION}'s standing, alone, ${String(count)} times`);
  const standingRead = await measure(
    async () =>
      (await findOpenApiOperationStanding(
        stack.sql,
        environment.id,
        APP,
        'issues_list_for_repo',
      )) !== null,
    { concurrency: 1, count },
  );
  const appRead = await measure(
    async () => (await findOpenApiApp(stack.sql, environment.id, APP)) !== null,
    { concurrency: 1, count },
  );
  return {
    snapshot: { storedMb: mb(Number(row?.stored)), textMb: mb(Number(row?.text)) },
    standingRead,
    appRead,
  };
}

export function openApiCallTable(result: OpenApiCallResult): string {
  const c = String(result.concurrency);
  const rows: [string, Measurement][] = [
    ['Prism directly, c=1', result.direct],
    ['through Gatehouse, c=1', result.gatehouse],
    ['catalog read acme.list_tasks, c=1', result.catalog],
    [`Prism directly, c=${c}`, result.directConcurrent],
    [`through Gatehouse, c=${c}`, result.gatehouseConcurrent],
  ];
  const lines = [
    `${result.action} (${result.request}, ${String(result.responseBytes)} bytes) against ` +
      `${result.prism}; ${result.document} registered in ${String(result.registerSeconds)} s`,
    ...rows.map(
      ([name, m]) =>
        `  ${name.padEnd(34)} p50 ${m.p50.toFixed(1).padStart(7)} ms  p95 ${m.p95.toFixed(1).padStart(7)}  ` +
        `p99 ${m.p99.toFixed(1).padStart(7)}  max ${m.max.toFixed(1).padStart(7)}  ` +
        `${String(m.throughput).padStart(6)}/s  ${String(m.requests)} calls, ${String(m.errors)} errors`,
    ),
    `  Gatehouse ÷ direct: p50 ${String(result.ratios.p50)} (+${String(result.ratios.overheadP50Ms)} ms), ` +
      `p95 ${String(result.ratios.p95)}, p99 ${String(result.ratios.p99)}; ` +
      `calls/s at c=${c} ${String(result.ratios.throughputConcurrent)}`,
    `  snapshot ${String(result.snapshot.textMb)} MB of JSON (${String(result.snapshot.storedMb)} MB stored); ` +
      `one read of the operation's standing p50 ${String(result.standingRead.p50)} ms ` +
      `(the app's row alone ${String(result.appRead.p50)} ms)`,
    ...(
      [
        [result.action, result.gatehouse.cost],
        ['acme.list_tasks', result.catalog.cost],
      ] as const
    ).map(
      ([name, cost]) =>
        `  cost per call of ${name} at c=1: CPU ms api ${String(cost.cpuMsPerCall.api)}, ` +
        `worker ${String(cost.cpuMsPerCall.worker)}, temporal ${String(cost.cpuMsPerCall.temporal)}, ` +
        `postgres ${String(cost.cpuMsPerCall.postgres)} (total ${String(cost.cpuMsPerCall.total)}); ` +
        `${String(cost.postgresTransactionsPerCall)} Postgres transactions`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
