import type { Client } from '@temporalio/client';
import { Router } from 'express';
import type { Sql } from '../../infra/database/client.js';
import { ServiceUnavailableError } from '../errors.js';

const CHECK_TIMEOUT_MS = 2000;

/**
 * Bounded whatever the dependency does: a frozen Postgres holds the query until the client's
 * silence watch drops the connection (infra/database/client.ts), long after this answers.
 */
async function probe(check: () => Promise<unknown>): Promise<'ok' | 'unreachable'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error('timeout'));
    }, CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch {
    return 'unreachable';
  } finally {
    clearTimeout(timer);
  }
}

/** Liveness says the process answers; readiness says its dependencies answer too. */
export function healthRoutes(deps: { sql: Sql; temporal: Client }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [postgres, temporal] = await Promise.all([
      probe(() => deps.sql`select 1`),
      // A deadline on the call itself, so the SDK stops retrying when the probe gives up.
      probe(() =>
        deps.temporal.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS - 500, () =>
          deps.temporal.workflowService.getSystemInfo({}),
        ),
      ),
    ]);
    const checks = { postgres, temporal };
    if (postgres !== 'ok' || temporal !== 'ok') {
      throw new ServiceUnavailableError('A dependency of the service is unreachable.', { checks });
    }
    res.json({ status: 'ready', checks });
  });
  return router;
}
