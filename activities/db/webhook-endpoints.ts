import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

/** What the API and CLI may show: the signing secret is write-only, its last four characters
 * are enough to tell which one is set. */
export interface WebhookEndpointView {
  url: string;
  secretHint: string;
  updatedAt: Date;
  updatedBy: string;
  /** Whether `audit.event` batches are delivered too. */
  auditEvents: boolean;
  /** The seq (export `cursor`) of the last event a receiver acknowledged; null while off. */
  auditDeliveredSeq: string | null;
}

/** The endpoint with its secret in clear, for signing a delivery and nothing else. */
export interface WebhookEndpoint {
  url: string;
  secret: string;
  /**
   * The agent of the API key that set it, null when the CLI did: that key chose where decision
   * links go, so they never decide its agent's own calls (activities/approvals/link-provenance).
   */
  keyAgentId: string | null;
  /** Audit delivery's state, as in the view. */
  auditEvents: boolean;
  auditDeliveredSeq: string | null;
}

interface Row {
  url: string;
  secretSealed: string;
  updatedAt: Date;
  updatedBy: string;
  keyAgentId: string | null;
  auditEvents: boolean;
  auditDeliveredSeq: string | null;
}

// Binds the sealed secret to its environment's row: a value copied to another row does not open.
const secretAad = (environmentId: string) => `webhook-endpoint:${environmentId}`;

function view(keyring: Keyring, environmentId: string, row: Row): WebhookEndpointView {
  return {
    url: row.url,
    secretHint: open(keyring, row.secretSealed, secretAad(environmentId)).slice(-4),
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
    auditEvents: row.auditEvents,
    auditDeliveredSeq: row.auditDeliveredSeq,
  };
}

/**
 * @param setter who sets it: `{ agentId }` of the API key, or `'cli'` for the command line
 * (recorded as `updated_by` "cli" with no key agent).
 */
export async function setWebhookEndpoint(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  input: { url: string; secret: string; auditEvents: boolean },
  setter: { agentId: string } | 'cli',
): Promise<WebhookEndpointView> {
  const keyAgentId = setter === 'cli' ? null : setter.agentId;
  // Turned on, audit delivery starts after the newest event (history is the export's job); kept
  // on, it goes on where it was, even for a new URL; turned off, it forgets where it was.
  const [row]: [Row?] = await sql`
    insert into webhook_endpoints (environment_id, url, secret_sealed, updated_by, key_agent_id,
      audit_events, audit_delivered_seq)
    values (${environmentId}, ${input.url},
            ${seal(keyring, input.secret, secretAad(environmentId))}, ${keyAgentId ?? 'cli'},
            ${keyAgentId}, ${input.auditEvents},
            case when ${input.auditEvents}::boolean then
              (select coalesce(max(seq), 0) from audit_events
                where environment_id = ${environmentId}) end)
    on conflict (environment_id) do update
      set url = excluded.url, secret_sealed = excluded.secret_sealed,
          updated_by = excluded.updated_by, key_agent_id = excluded.key_agent_id,
          audit_events = excluded.audit_events,
          audit_delivered_seq = case when excluded.audit_events
            then coalesce(webhook_endpoints.audit_delivered_seq, excluded.audit_delivered_seq) end,
          updated_at = now()
    returning ${columns(sql)}`;
  if (!row) throw new Error('webhook endpoint upsert returned nothing');
  return view(keyring, environmentId, row);
}

const columns = (sql: Db) =>
  sql`url, secret_sealed, updated_at, updated_by, key_agent_id, audit_events,
    audit_delivered_seq::text as audit_delivered_seq`;

async function findRow(sql: Db, environmentId: string): Promise<Row | null> {
  const [row]: [Row?] = await sql`
    select ${columns(sql)} from webhook_endpoints where environment_id = ${environmentId}`;
  return row ?? null;
}

export async function findWebhookEndpointView(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
): Promise<WebhookEndpointView | null> {
  const row = await findRow(sql, environmentId);
  return row ? view(keyring, environmentId, row) : null;
}

/** The endpoint and its signing secret in clear; never returned by the API. */
export async function findWebhookEndpointForDelivery(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
): Promise<WebhookEndpoint | null> {
  const row = await findRow(sql, environmentId);
  if (!row) return null;
  return {
    url: row.url,
    secret: open(keyring, row.secretSealed, secretAad(environmentId)),
    keyAgentId: row.keyAgentId,
    auditEvents: row.auditEvents,
    auditDeliveredSeq: row.auditDeliveredSeq,
  };
}

/** Whether the environment has an endpoint: approval events are delivered only then. */
export async function hasWebhookEndpoint(sql: Db, environmentId: string): Promise<boolean> {
  const [row]: [{ exists: boolean }?] = await sql`
    select exists (select 1 from webhook_endpoints where environment_id = ${environmentId})`;
  return row?.exists ?? false;
}

/** False when the environment had no endpoint. */
export async function deleteWebhookEndpoint(sql: Db, environmentId: string): Promise<boolean> {
  const rows = await sql`delete from webhook_endpoints where environment_id = ${environmentId}`;
  return rows.count > 0;
}

/** The environments whose endpoint takes `audit.event`: a starting worker resumes their delivery. */
export async function environmentsWithAuditDelivery(sql: Db): Promise<string[]> {
  const rows = await sql<{ environmentId: string }[]>`
    select environment_id from webhook_endpoints where audit_events`;
  return rows.map((row) => row.environmentId);
}

/**
 * Records that a receiver acknowledged the events up to `toSeq`, if delivery is still on and
 * still at `fromSeq` (an endpoint turned off and on again meanwhile starts afresh).
 */
export async function advanceAuditDelivery(
  sql: Db,
  environmentId: string,
  fromSeq: string,
  toSeq: string,
): Promise<void> {
  await sql`
    update webhook_endpoints set audit_delivered_seq = ${toSeq}
    where environment_id = ${environmentId} and audit_events
      and audit_delivered_seq = ${fromSeq}`;
}
