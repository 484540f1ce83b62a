import { createHash, sign, verify, type KeyObject } from 'node:crypto';

/** A sealed checkpoint as signed: what its hash and signature cover. */
export interface CheckpointBody {
  id: string;
  environmentId: string;
  /** The rows sealed are the environment's with seq in (afterSeq, lastSeq]. */
  afterSeq: string;
  lastSeq: string;
  eventCount: number;
  merkleRoot: Buffer;
  /** The previous checkpoint's hash; null for an environment's first. */
  previousHash: Buffer | null;
  keyId: string;
  sealedAt: Date;
}

/**
 * The canonical form a checkpoint's hash is taken over and its signature made on: a JSON array of
 * a version tag and the fields as strings or null, binary values in lowercase hex.
 */
export function canonicalCheckpoint(body: CheckpointBody): string {
  return JSON.stringify([
    'gatehouse.audit.checkpoint.v1',
    body.id,
    body.environmentId,
    body.afterSeq,
    body.lastSeq,
    String(body.eventCount),
    body.merkleRoot.toString('hex'),
    body.previousHash === null ? null : body.previousHash.toString('hex'),
    body.keyId,
    body.sealedAt.toISOString(),
  ]);
}

export function checkpointHash(body: CheckpointBody): Buffer {
  return createHash('sha256').update(canonicalCheckpoint(body), 'utf8').digest();
}

/** Ed25519 over the canonical form's UTF-8 bytes. */
export function signCheckpoint(body: CheckpointBody, privateKey: KeyObject): Buffer {
  return sign(null, Buffer.from(canonicalCheckpoint(body), 'utf8'), privateKey);
}

export function checkpointSignatureValid(
  body: CheckpointBody,
  signature: Buffer,
  publicKey: KeyObject,
): boolean {
  return verify(null, Buffer.from(canonicalCheckpoint(body), 'utf8'), publicKey, signature);
}
