import { verifyAudit, type VerifyReport } from '../../../activities/audit/verify-audit.js';
import { newestCheckpointSeal } from '../../../activities/db/audit-checkpoints.js';
import type { Sql } from '../../../infra/database/client.js';
import type { Logger } from '../../../infra/logger.js';

/** The stretch of the trail the console verifies: the last day, never the whole history. */
export const CHECKED_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A result younger than this is shown as it is; an older one is checked again on the next look. */
export const FRESH_FOR_MS = 5 * 60 * 1000;
/** A page waits this long for a check it started; a longer one shows on a later look. */
const PAGE_WAITS_MS = 1500;
/** The problems a page lists; `gatehouse audit verify` names them all. */
const SHOWN_PROBLEMS = 5;

export type CheckOutcome =
  | { state: 'verified'; startedAt: Date; ranAt: Date; since: Date; report: VerifyReport }
  | { state: 'failed'; startedAt: Date; ranAt: Date; since: Date; message: string };

export interface TrailIntegrity {
  /** The newest checkpoint on the chain; null while nothing is sealed. */
  checkpoint: { id: string; lastSeq: string; eventCount: number; sealedAt: Date } | null;
  /** The latest finished check; null before the first. */
  last: CheckOutcome | null;
  /** A check is running now (its result shows on a later look). */
  running: boolean;
}

interface EnvironmentChecks {
  last: CheckOutcome | null;
  running: Promise<CheckOutcome> | null;
}

/**
 * The audit trail's integrity as the console's Calls page shows it: the newest checkpoint, and
 * `verifyAudit` over the last day (the checkpoints sealed in it, the events they seal, the
 * unsealed events written in it), so a look costs at most a day of the trail, never its history.
 * A result is kept per environment in this API process for a few minutes, and at most one check
 * of an environment runs at a time, however many people look: many looks cost one verify.
 */
export class TrailIntegrityChecks {
  private readonly environments = new Map<string, EnvironmentChecks>();

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
  ) {}

  /** Where the environment's trail stands; starts a check when the last one is stale. */
  async status(environmentId: string): Promise<TrailIntegrity> {
    const checkpoint = await newestCheckpointSeal(this.sql, environmentId);
    const checks = this.checksOf(environmentId);
    const stale = checks.last === null || Date.now() - checks.last.ranAt.getTime() >= FRESH_FOR_MS;
    if (stale) await this.waitBriefly(this.start(environmentId));
    return { checkpoint, last: checks.last, running: checks.running !== null };
  }

  /** A check now, unless one is running (asked for by a person: "Check again"). */
  async checkAgain(environmentId: string): Promise<void> {
    await this.waitBriefly(this.start(environmentId));
  }

  private checksOf(environmentId: string): EnvironmentChecks {
    let checks = this.environments.get(environmentId);
    if (!checks) {
      checks = { last: null, running: null };
      this.environments.set(environmentId, checks);
    }
    return checks;
  }

  private start(environmentId: string): Promise<CheckOutcome> {
    const checks = this.checksOf(environmentId);
    if (checks.running) return checks.running;
    const startedAt = new Date();
    const since = new Date(startedAt.getTime() - CHECKED_WINDOW_MS);
    const running = verifyAudit(this.sql, {
      environmentId,
      since,
      unsealedSince: since,
      maxProblems: SHOWN_PROBLEMS,
    })
      .then(
        (report): CheckOutcome => ({
          state: 'verified',
          startedAt,
          ranAt: new Date(),
          since,
          report,
        }),
        (error: unknown): CheckOutcome => {
          this.logger.warn({ err: error, environmentId }, 'console audit check failed');
          return {
            state: 'failed',
            startedAt,
            ranAt: new Date(),
            since,
            message: 'The check could not finish (the database did not answer in time).',
          };
        },
      )
      .then((outcome) => {
        // Recorded before anyone waiting for the check goes on.
        checks.last = outcome;
        checks.running = null;
        return outcome;
      });
    checks.running = running;
    return running;
  }

  /** Waits for the check a little, so a small trail's result shows on the page that asked. */
  private async waitBriefly(check: Promise<CheckOutcome>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, PAGE_WAITS_MS);
      timer.unref();
    });
    await Promise.race([check.then(() => undefined), waited]);
    clearTimeout(timer);
  }
}
