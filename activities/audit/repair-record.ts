import { createHash, sign, verify, type KeyObject } from 'node:crypto';

/**
 * A repair of one environment's chain as signed (migration 025): the checkpoints it took off the
 * chain, each with its hash, the last good checkpoint it resealed after, and the checkpoints it
 * sealed in their place.
 */
export interface RepairBody {
  id: string;
  environmentId: string;
  /** null when no checkpoint of the trail chained from its start. */
  afterCheckpointId: string | null;
  afterSeq: string;
  superseded: { id: string; hash: Buffer }[];
  resealedIds: string[];
  keyId: string;
  repairedAt: Date;
}

/**
 * The canonical form a repair's hash is taken over and its signature made on: a JSON array of a
 * version tag and the fields, binary values in lowercase hex, as a checkpoint's is.
 */
export function canonicalRepair(body: RepairBody): string {
  return JSON.stringify([
    'gatehouse.audit.repair.v1',
    body.id,
    body.environmentId,
    body.afterCheckpointId,
    body.afterSeq,
    body.superseded.map(({ id, hash }) => [id, hash.toString('hex')]),
    body.resealedIds,
    body.keyId,
    body.repairedAt.toISOString(),
  ]);
}

export function repairHash(body: RepairBody): Buffer {
  return createHash('sha256').update(canonicalRepair(body), 'utf8').digest();
}

/** Ed25519 over the canonical form's UTF-8 bytes. */
export function signRepair(body: RepairBody, privateKey: KeyObject): Buffer {
  return sign(null, Buffer.from(canonicalRepair(body), 'utf8'), privateKey);
}

export function repairSignatureValid(
  body: RepairBody,
  signature: Buffer,
  publicKey: KeyObject,
): boolean {
  return verify(null, Buffer.from(canonicalRepair(body), 'utf8'), publicKey, signature);
}
