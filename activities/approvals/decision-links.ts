import type { Config } from '../../infra/config.js';
import type { Db } from '../../infra/database/client.js';
import type { Approval } from '../db/approvals.js';
import { saveApprovalLinks } from '../db/approval-links.js';
import type { LinkChannel } from './link-provenance.js';
import { GENERIC_APPROVER, approvalLinkToken, approvalLinkUrl } from './link-token.js';

/** A decision link as a webhook receiver or an operator gets it. */
export interface DecisionLink {
  approver: string;
  url: string;
  expires_at: string;
}

/** Where links are going: only the channels of README "Decision links", never to an agent. */
export interface LinkDestination {
  channel: LinkChannel;
  /** The agent of the API key that chose where they go (see LinkProvenance), or null. */
  keyAgentId: string | null;
}

/** One link per decider the policy asked, or a single generic link when it named none. */
export function linkApprovers(approval: Pick<Approval, 'requestedFrom'>): string[] {
  return approval.requestedFrom.length > 0 ? [...approval.requestedFrom] : [GENERIC_APPROVER];
}

/**
 * Makes (or makes again: tokens are derived, not random) the decision links of an approval for
 * one destination, valid until it expires, and stores their hashes with that provenance so the
 * approval page can recognise them and know where they went. The URLs carry the tokens: hand
 * them to that destination and to nothing else (no log, no Temporal payload, no agent).
 */
export async function decisionLinks(
  sql: Db,
  config: Pick<Config, 'api' | 'encryption'>,
  approval: Pick<Approval, 'id' | 'environmentId' | 'requestedFrom' | 'expiresAt'>,
  destination: LinkDestination,
  approvers: readonly string[] = linkApprovers(approval),
): Promise<DecisionLink[]> {
  const links = approvers.map((approver) => ({
    approver,
    token: approvalLinkToken(config.encryption, {
      approvalId: approval.id,
      approver,
      ...destination,
    }),
  }));
  await saveApprovalLinks(
    sql,
    links.map(({ approver, token }) => ({
      token,
      approver,
      approvalId: approval.id,
      environmentId: approval.environmentId,
      ...destination,
      expiresAt: approval.expiresAt,
    })),
  );
  return links.map(({ approver, token }) => ({
    approver,
    url: approvalLinkUrl(config.api.publicUrl, token),
    expires_at: approval.expiresAt.toISOString(),
  }));
}
