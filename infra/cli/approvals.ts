import { decisionLinks, linkApprovers } from '../../activities/approvals/decision-links.js';
import { findApproval } from '../../activities/db/approvals.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { deciderRefusal } from '../../workflows/decider-rules.js';
import { loadConfig, type Config } from '../config.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';
import { readRunningStack } from '../dev/running-stack.js';

export interface ApprovalLinkOptions {
  env: string;
  approver?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The encryption key and public address of the API, so a link made here is the one the webhook
 * would carry and opens where the API listens: from the environment as theirs are, or, for the
 * local stack of `gatehouse dev` (no DATABASE_URL), its generated key and the address the
 * running stack listens on (its preferred port may be another program's, which would receive
 * the decision token), else the preferred one. PUBLIC_URL, when set, wins.
 */
export async function approvalLinkSettings(): Promise<Pick<Config, 'api' | 'encryption'>> {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const running = local ? await readRunningStack() : null;
  const config = loadConfig({
    ...(local ? { ENCRYPTION_KEY: local.encryptionKey, API_PORT: String(local.api.port) } : {}),
    ...(running ? { PUBLIC_URL: running.apiUrl } : {}),
    ...process.env,
    // Only the encryption key and the public URL are read here; the database is withCliDatabase's.
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://local',
  });
  return { api: config.api, encryption: config.encryption };
}

/**
 * A decision link for operators without a webhook receiver, for this approver, valid until the
 * approval expires. It is the CLI's own (recorded with channel `cli`), not the one
 * `approval.requested` carries; both decide alike.
 */
export async function approvalLinkCommand(
  sql: Sql,
  settings: Pick<Config, 'api' | 'encryption'>,
  approvalId: string,
  options: ApprovalLinkOptions,
): Promise<string> {
  const environment = await findEnvironmentByName(sql, options.env);
  if (!environment) throw new Error(`no environment "${options.env}"`);
  const approval = UUID.test(approvalId)
    ? await findApproval(sql, environment.id, approvalId)
    : null;
  if (!approval) throw new Error(`no approval ${approvalId} in environment "${options.env}"`);
  if (approval.status !== 'pending' || approval.expiresAt <= new Date()) {
    const status = approval.status === 'pending' ? 'expired' : approval.status;
    throw new Error(`approval ${approval.id} is ${status}; only a pending one can be decided`);
  }

  const asked = linkApprovers(approval);
  const approver = options.approver ?? (asked.length === 1 ? asked[0] : undefined);
  if (approver === undefined) {
    throw new Error(`name the approver with --approver: this approval asks ${asked.join(', ')}`);
  }
  // A link the four-eyes rules would refuse at its first use is a mistake to point out now.
  const refusal = deciderRefusal(
    {
      agentId: approval.agentId,
      requestedFrom: approval.requestedFrom,
      decided: approval.decisions.map((decision) => decision.identity),
      agentKeyOwners: approval.agentKeyOwners,
    },
    { kind: 'link', addressee: approver },
  );
  if (refusal !== null) throw new Error(refusal);

  // The operator's own channel: no API key is involved, so no agent is recorded.
  const [link] = await decisionLinks(
    sql,
    settings,
    approval,
    { channel: 'cli', keyAgentId: null },
    [approver],
  );
  if (!link) throw new Error('no link was made');
  return [
    `url       ${link.url}`,
    `approver  ${link.approver}`,
    `expires   ${link.expires_at}`,
    `Whoever opens this link decides as "${link.approver}": give it to that person only.`,
  ].join('\n');
}
