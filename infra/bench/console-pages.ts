import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CookieJar } from '../demo-app/cookie-jar.js';
import { signInAs } from '../dev-idp/scripted-sign-in.js';
import { columns, type Row } from './columns.js';
import { seedConsole, type ConsoleSeed } from './console-seed.js';
import { measure, type Measurement } from './measure.js';
import { settledTransactions } from './postgres-stats.js';
import { cpuByRole, cpuPerCall } from './process-cpu.js';
import type { Settings } from './scenarios.js';
import type { BenchStack } from './stack.js';

/** The pages measured, in the order they are reported. */
export const CONSOLE_PAGES = [
  'inbox',
  'inboxByAgent',
  'calls',
  'callsByAction',
  'callEvent',
  'seededEvent',
] as const;

export type ConsolePage = (typeof CONSOLE_PAGES)[number];

const LABELS: Record<ConsolePage, string> = {
  inbox: 'inbox, first page',
  inboxByAgent: 'inbox ?agent= (1 in 100 held)',
  calls: 'calls, first page (integrity cached)',
  callsByAction: 'calls ?action= (1 in 1,000 events)',
  callEvent: 'a call’s event page (+ Temporal lookup)',
  seededEvent: 'a seeded event’s page (Postgres only)',
};

/**
 * The integrity panel's result is kept 5 minutes per API process; a calls series stops before
 * that, so that no measured page is the one that starts the next check and waits for it.
 */
const CALLS_SERIES_MS = 4 * 60 * 1000;

export interface ConsolePagesResult {
  seed: ConsoleSeed;
  /** One sign-in as alice@example.com over HTTP: the console's sign-in to its callback. */
  signInMs: number;
  /**
   * The calls page's first load after the trail was seeded: its integrity panel starts verifying
   * the last day and waits up to 1.5 s for it (`panel` says what it then showed), and when the
   * verification's result first showed on the page, polled every 200 ms from that first load.
   */
  callsColdFirstLoad: {
    ms: number;
    panel: 'checking' | 'result';
    checkShownAfterMs: number;
    /** The badge the finished check showed: `Intact`, `Does not verify` or `Not checked`. */
    checkOutcome: string;
    checkedEvents: number | null;
  };
  pages: Record<ConsolePage, PageMeasurement>;
}

export interface PageMeasurement extends Measurement {
  kilobytes: number;
  /**
   * What one page cost, less dependent on the machine's load than its time: CPU ms of the API
   * and of Postgres, and Postgres transactions (every statement outside a transaction is one).
   */
  cost: { apiCpuMs: number; postgresCpuMs: number; postgresTransactions: number };
  /** Why requests counted as errors, by reason (an unexpected status, or the page's content). */
  errorReasons: Record<string, number>;
}

/** A page as the signed-in person's browser fetches it: its cookies, no redirect followed. */
function browserOf(base: string, jar: CookieJar) {
  return async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${base}${path}`, {
      redirect: 'manual',
      ...init,
      headers: { cookie: jar.header(), ...(init.headers as Record<string, string> | undefined) },
    });
    jar.store(response);
    return {
      status: response.status,
      location: response.headers.get('location'),
      html: await response.text(),
    };
  };
}

/** The integrity panel is waiting for a check (the first one, or a new one while it runs). */
const checkRunning = (html: string) => html.includes('reload to see it');

/** The integrity panel's badge for the last day: `Intact`, `Does not verify`, `Not checked`. */
function checkBadge(html: string): string {
  const panel = html.slice(html.indexOf('Last 24 hours'));
  return /class="badge(?: ok| bad)?">([^<]+)</.exec(panel)?.[1]?.trim() ?? 'unknown';
}

/**
 * The console's inbox and calls pages, signed in as Alice (an approver), one request at a time at
 * loopback: each figure is the API's time for the page plus a loopback round trip (and the
 * client's reading of the answer). See ./console-seed.ts for what the pages show.
 */
export async function consolePagesScenario(
  stack: BenchStack,
  settings: Pick<Settings, 'warmup' | 'latencyRequests'>,
  log: (line: string) => void,
): Promise<ConsolePagesResult> {
  const seed = await seedConsole(stack, log);
  // The first API process only: the integrity result is kept per process.
  const api = stack.config.api.publicUrl;
  const base = '/console/bench';
  const jar = new CookieJar();
  const get = browserOf(api, jar);

  log('console: signing in as alice@example.com');
  let t0 = performance.now();
  const callback = await signInAs(new URL(`${api}${base}/sign-in`), 'alice@example.com', {
    jar,
    isDestination: (url) => url.pathname === '/console/callback',
  });
  const landed = await get(callback.pathname + callback.search);
  if (landed.status !== 303) {
    throw new Error(`signing in to the console answered ${String(landed.status)}`);
  }
  const signInMs = Math.round((performance.now() - t0) * 10) / 10;

  /** Loads the calls page until its panel shows a finished check; ms from `since`. */
  const untilChecked = async (since: number) => {
    for (;;) {
      const page = await get(`${base}/calls`);
      if (page.status === 200 && !checkRunning(page.html)) {
        const events = /(\d+)\s+events?\s+since/.exec(page.html)?.[1];
        return {
          afterMs: Math.round(performance.now() - since),
          outcome: checkBadge(page.html),
          events: events === undefined ? null : Number(events),
        };
      }
      await sleep(200);
    }
  };

  log('console: the calls page, first load (integrity of the last day not yet checked)');
  t0 = performance.now();
  const cold = await get(`${base}/calls`);
  const coldMs = Math.round((performance.now() - t0) * 10) / 10;
  if (cold.status !== 200) throw new Error(`the calls page answered ${String(cold.status)}`);
  const coldCheck = await untilChecked(t0);

  /** A new check (the panel's "Check again"), waited for: the next series reads its result. */
  const freshCheck = async () => {
    const page = await get(`${base}/calls`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '';
    const asked = await get(`${base}/calls/integrity-check`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    if (asked.status !== 303) {
      throw new Error(`Check again answered ${String(asked.status)}`);
    }
    await untilChecked(performance.now());
  };

  const sizes: Partial<Record<ConsolePage, number>> = {};
  let reasons: Record<string, number> = {};
  const failed = (reason: string) => {
    reasons[reason] = (reasons[reason] ?? 0) + 1;
    return false;
  };
  const pageCheck =
    (name: ConsolePage, path: string, wrong: (html: string) => string | null) => async () => {
      const page = await get(path).catch((error: unknown) => {
        failed(`request failed: ${String(error)}`.slice(0, 200));
        throw error;
      });
      sizes[name] = page.html.length;
      if (page.status !== 200) {
        const to = page.location === null ? '' : ` to ${new URL(page.location, api).pathname}`;
        return failed(`status ${String(page.status)}${to}`);
      }
      const problem = wrong(page.html);
      return problem === null ? true : failed(problem);
    };
  const fullPage = (html: string) => {
    const rows = (html.match(/\/inbox\/[0-9a-f-]{36}"/g) ?? []).length;
    return rows === 25 ? null : `${String(rows)} rows`;
  };
  const calls = (html: string) => {
    if (!html.includes('aria-label="Calls, newest first"')) return 'no list';
    return checkRunning(html) ? 'integrity check running' : null;
  };
  const showing = (id: string) => (html: string) => (html.includes(id) ? null : 'not the event');
  const requests: Record<ConsolePage, () => Promise<boolean>> = {
    inbox: pageCheck('inbox', `${base}/inbox`, fullPage),
    inboxByAgent: pageCheck('inboxByAgent', `${base}/inbox?agent=${seed.filteredAgent}`, fullPage),
    calls: pageCheck('calls', `${base}/calls`, calls),
    callsByAction: pageCheck('callsByAction', `${base}/calls?action=${seed.rareAction}`, calls),
    callEvent: pageCheck(
      'callEvent',
      `${base}/calls/${seed.callEventId}`,
      showing(seed.callEventId),
    ),
    seededEvent: pageCheck(
      'seededEvent',
      `${base}/calls/${seed.seededEventId}`,
      showing(seed.seededEventId),
    ),
  };

  log('console: warming up');
  for (const name of CONSOLE_PAGES) {
    await measure(requests[name], { concurrency: 1, count: settings.warmup });
  }
  const pages: Partial<ConsolePagesResult['pages']> = {};
  for (const name of CONSOLE_PAGES) {
    const isCalls = name === 'calls' || name === 'callsByAction';
    if (isCalls) await freshCheck();
    log(`console: ${LABELS[name]}`);
    reasons = {};
    const txBefore = await settledTransactions(stack.sql);
    const cpuBefore = await cpuByRole();
    const measured = await measure(requests[name], {
      concurrency: 1,
      count: settings.latencyRequests,
      ...(isCalls ? { durationMs: CALLS_SERIES_MS } : {}),
    });
    const cpuAfter = await cpuByRole();
    const txAfter = await settledTransactions(stack.sql);
    const cpu = cpuPerCall(cpuBefore, cpuAfter, measured.requests);
    // The first statistics read is this benchmark's own (the second reads before it commits).
    const tx = Math.max(0, txAfter - txBefore - 1);
    pages[name] = {
      ...measured,
      kilobytes: Math.round((sizes[name] ?? 0) / 100) / 10,
      cost: {
        apiCpuMs: cpu.api,
        postgresCpuMs: cpu.postgres,
        postgresTransactions:
          measured.requests === 0 ? 0 : Math.round((tx / measured.requests) * 100) / 100,
      },
      errorReasons: reasons,
    };
  }
  return {
    seed,
    signInMs,
    callsColdFirstLoad: {
      ms: coldMs,
      panel: checkRunning(cold.html) ? 'checking' : 'result',
      checkShownAfterMs: coldCheck.afterMs,
      checkOutcome: coldCheck.outcome,
      checkedEvents: coldCheck.events,
    },
    pages: pages as ConsolePagesResult['pages'],
  };
}

/** The pages side by side, then the cold first load and the seeding. */
export function consolePagesTable(result: ConsolePagesResult): string {
  const rows: Row[] = [
    [
      'console page (alice, loopback)',
      'requests',
      'errors',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'max ms',
      'KB',
      'api cpu ms',
      'pg cpu ms',
      'pg tx',
    ],
  ];
  const errors: string[] = [];
  for (const name of CONSOLE_PAGES) {
    const m = result.pages[name];
    rows.push([
      LABELS[name],
      m.requests,
      m.errors,
      m.p50,
      m.p95,
      m.p99,
      m.max,
      m.kilobytes,
      m.cost.apiCpuMs,
      m.cost.postgresCpuMs,
      m.cost.postgresTransactions,
    ]);
    for (const [reason, count] of Object.entries(m.errorReasons)) {
      errors.push(`${LABELS[name]}: ${String(count)} × ${reason}\n`);
    }
  }
  const { callsColdFirstLoad: cold, seed } = result;
  return (
    `${columns(rows)}\n${errors.join('')}` +
    `calls page, cold first load: ${String(cold.ms)} ms (panel showed ${cold.panel === 'checking' ? '“checking”' : 'its result'}); ` +
    `the check of the last day showed “${cold.checkOutcome}” (${String(cold.checkedEvents ?? '?')} events) after ${String(cold.checkShownAfterMs)} ms\n` +
    `sign-in over HTTP as alice@example.com: ${String(result.signInMs)} ms; seeded ` +
    `${String(seed.heldApprovals)} held approvals (${String(seed.agents)} agents) in ${String(seed.seconds.approvals)} s, ` +
    `${String(seed.auditEvents)} audit events (${String(seed.rareEvents)} ${seed.rareAction}) in ${String(seed.seconds.auditEvents)} s\n`
  );
}
