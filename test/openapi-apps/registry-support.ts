import type { Sql } from '../../infra/database/client.js';

export interface RegistryEventRow {
  decision: string;
  reason: string;
  request: { operation: string } & Record<string, unknown>;
}

/** The audit events an OpenAPI app's registry wrote (`<app>.*`, via operator), oldest first. */
export async function findSnapshotEvents(
  sql: Sql,
  environmentId: string,
  app: string,
): Promise<RegistryEventRow[]> {
  return sql<RegistryEventRow[]>`
    select decision, reason, request from audit_events
    where environment_id = ${environmentId} and action = ${`${app}.*`} and via = 'operator'
    order by time, id`;
}
