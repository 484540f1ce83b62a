import { findEnvironmentByName } from '../../activities/db/environments.js';
import { createSql } from '../database/client.js';
import { insertSyntheticAuditEvents } from './synthetic-audit-events.js';
import type { BenchStack } from './stack.js';

/** How long the trail the export and console scenarios read is. */
export const SEEDED_AUDIT_EVENTS = 100_000;

/**
 * Synthetic events of ~600 bytes (a write's request and answer, as the call workflow records
 * them, ./synthetic-audit-events.ts) in the bench environment, written behind the service's back
 * through the insert trigger that hashes and numbers each, 10,000 a statement, through a
 * connection without the service's statement timeout. `idSeed` keeps two seedings' ids apart;
 * `action` is what they record (default `acme.create_task`).
 */
export async function seedAuditTrail(
  stack: BenchStack,
  {
    count = SEEDED_AUDIT_EVENTS,
    idSeed = 'export-',
    action,
  }: { count?: number; idSeed?: string; action?: string } = {},
): Promise<void> {
  const environment = await findEnvironmentByName(stack.sql, 'bench');
  if (!environment) throw new Error('the bench stack has no bench environment');
  const seeding = createSql(stack.config.database.url, {
    max: 1,
    statementTimeoutMs: 120_000,
    idleInTransactionTimeoutMs: 120_000,
  });
  try {
    for (let from = 1; from <= count; from += 10_000) {
      await insertSyntheticAuditEvents(seeding, environment.id, {
        from,
        count: Math.min(10_000, count - from + 1),
        idSeed,
        ...(action === undefined ? {} : { action }),
      });
    }
  } finally {
    await seeding.end();
  }
}
