import type { Db } from '../../infra/database/client.js';
import type { RepairBody } from '../audit/repair-record.js';
import { splitHashes } from './audit-checkpoints.js';

/** One row of audit_repairs (migration 025). */
export interface AuditRepair extends RepairBody {
  hash: Buffer;
  signature: Buffer;
}

interface RepairRow extends Omit<AuditRepair, 'superseded'> {
  supersededIds: string[];
  supersededHashes: Buffer;
}

export async function insertRepair(sql: Db, repair: AuditRepair): Promise<void> {
  await sql`
    insert into audit_repairs (id, environment_id, after_checkpoint_id, after_seq, superseded_ids,
      superseded_hashes, resealed_ids, hash, key_id, signature, repaired_at)
    values (${repair.id}, ${repair.environmentId}, ${repair.afterCheckpointId}, ${repair.afterSeq},
      ${repair.superseded.map((s) => s.id)}::uuid[],
      ${Buffer.concat(repair.superseded.map((s) => s.hash))}, ${repair.resealedIds}::uuid[],
      ${repair.hash}, ${repair.keyId}, ${repair.signature}, ${repair.repairedAt})`;
}

/** The environment's repairs, oldest first. */
export async function repairsOf(sql: Db, environmentId: string): Promise<AuditRepair[]> {
  const rows = await sql<RepairRow[]>`
    select id, environment_id, after_checkpoint_id, after_seq, superseded_ids,
      superseded_hashes, resealed_ids, hash, key_id, signature, repaired_at
    from audit_repairs where environment_id = ${environmentId} order by repaired_at, id`;
  return rows.map(({ supersededIds, supersededHashes, ...row }) => {
    const hashes = splitHashes(supersededHashes);
    return {
      ...row,
      superseded: supersededIds.map((id, i) => ({ id, hash: hashes[i] ?? Buffer.alloc(0) })),
    };
  });
}
