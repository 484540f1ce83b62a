import type { Db } from '../../infra/database/client.js';

export interface FundedAccess {
  enabled: boolean;
  updatedAt: Date | null;
  updatedBy: string | null;
}

/** An environment that never set funded access has it off. */
export async function getFundedAccess(sql: Db, environmentId: string): Promise<FundedAccess> {
  const [row]: [FundedAccess?] = await sql`
    select enabled, updated_at, updated_by from funded_access where environment_id = ${environmentId}`;
  return row ?? { enabled: false, updatedAt: null, updatedBy: null };
}

export async function setFundedAccess(
  sql: Db,
  environmentId: string,
  enabled: boolean,
  updatedBy: string,
): Promise<FundedAccess> {
  const [row]: [FundedAccess?] = await sql`
    insert into funded_access (environment_id, enabled, updated_by)
    values (${environmentId}, ${enabled}, ${updatedBy})
    on conflict (environment_id)
      do update set enabled = excluded.enabled, updated_by = excluded.updated_by, updated_at = now()
    returning enabled, updated_at, updated_by`;
  if (!row) throw new Error('funded access upsert returned nothing');
  return row;
}
