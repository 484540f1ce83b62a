import type { Db } from '../../infra/database/client.js';
import type { LinkChannel, LinkProvenance } from '../approvals/link-provenance.js';
import { hashLinkToken } from '../approvals/link-token.js';

/** A decision link as stored: its token is not here, only the token's sha256. */
export interface ApprovalLink extends LinkProvenance {
  approvalId: string;
  environmentId: string;
  /** `decided_by` of a decision made through the link. */
  approver: string;
  expiresAt: Date;
  createdAt: Date;
  usedAt: Date | null;
}

export interface NewApprovalLink {
  token: string;
  approvalId: string;
  environmentId: string;
  approver: string;
  channel: LinkChannel;
  keyAgentId: string | null;
  expiresAt: Date;
}

/**
 * Stores links by the hash of their tokens. A token is the same at every delivery attempt (and
 * differs between channels and keys), so storing it again is a no-op that leaves the first row
 * (and its `used_at`) as it was.
 */
export async function saveApprovalLinks(sql: Db, links: readonly NewApprovalLink[]): Promise<void> {
  if (links.length === 0) return;
  const rows = links.map((link) => ({
    tokenHash: hashLinkToken(link.token),
    approvalId: link.approvalId,
    environmentId: link.environmentId,
    approver: link.approver,
    channel: link.channel,
    keyAgentId: link.keyAgentId,
    expiresAt: link.expiresAt,
  }));
  await sql`
    insert into approval_links
      ${sql(rows, 'tokenHash', 'approvalId', 'environmentId', 'approver', 'channel', 'keyAgentId', 'expiresAt')}
    on conflict (token_hash) do nothing`;
}

export async function findApprovalLink(sql: Db, token: string): Promise<ApprovalLink | null> {
  const [row]: [ApprovalLink?] = await sql`
    select approval_id, environment_id, approver, channel, key_agent_id, expires_at, created_at,
      used_at
    from approval_links where token_hash = ${hashLinkToken(token)}`;
  return row ?? null;
}

/** Records that a decision went through the link; the first decision's time is kept. */
export async function markApprovalLinkUsed(sql: Db, token: string): Promise<void> {
  await sql`
    update approval_links set used_at = now()
    where token_hash = ${hashLinkToken(token)} and used_at is null`;
}
