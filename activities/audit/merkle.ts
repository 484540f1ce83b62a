import { createHash } from 'node:crypto';

/**
 * The Merkle root of a checkpoint's events, in seq order (README "Audit integrity"):
 * leaf = sha256(0x00 ‖ event id, 16 bytes ‖ event hash, 32 bytes); node = sha256(0x01 ‖ left ‖
 * right); a level of odd length carries its last node up unchanged. The prefixes keep a leaf from
 * passing for a node; the id in the leaf ties each hash to its row.
 */
export function merkleRoot(leaves: readonly { id: string; hash: Buffer }[]): Buffer {
  if (leaves.length === 0) throw new Error('a Merkle root needs at least one leaf');
  let level = leaves.map(({ id, hash }) =>
    sha256(Buffer.from([0]), Buffer.from(id.replaceAll('-', ''), 'hex'), hash),
  );
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i] as Buffer;
      const right = level[i + 1];
      next.push(right === undefined ? left : sha256(Buffer.from([1]), left, right));
    }
    level = next;
  }
  return level[0] as Buffer;
}

function sha256(...parts: Buffer[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}
