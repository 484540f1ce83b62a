import type { Db } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

/** What the API and CLI may show: the signing secret is write-only, its last four characters
 * are enough to tell which one is set. */
export interface WebhookEndpointView {
  url: string;
  secretHint: string;
  updatedAt: Date;
  updatedBy: string;
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
}

interface Row {
  url: string;
  secretSealed: string;
  updatedAt: Date;
  updatedBy: string;
  keyAgentId: string | null;
}

// Binds the sealed secret to its environment's row: a value copied to another row does not open.
const secretAad = (environmentId: string) => `webhook-endpoint:${environmentId}`;

function view(keyring: Keyring, environmentId: string, row: Row): WebhookEndpointView {
  return {
    url: row.url,
    secretHint: open(keyring, row.secretSealed, secretAad(environmentId)).slice(-4),
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
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
  input: { url: string; secret: string },
  setter: { agentId: string } | 'cli',
): Promise<WebhookEndpointView> {
  const keyAgentId = setter === 'cli' ? null : setter.agentId;
  const [row]: [Row?] = await sql`
    insert into webhook_endpoints (environment_id, url, secret_sealed, updated_by, key_agent_id)
    values (${environmentId}, ${input.url},
            ${seal(keyring, input.secret, secretAad(environmentId))}, ${keyAgentId ?? 'cli'},
            ${keyAgentId})
    on conflict (environment_id) do update
      set url = excluded.url, secret_sealed = excluded.secret_sealed,
          updated_by = excluded.updated_by, key_agent_id = excluded.key_agent_id,
          updated_at = now()
    returning url, secret_sealed, updated_at, updated_by, key_agent_id`;
  if (!row) throw new Error('webhook endpoint upsert returned nothing');
  return view(keyring, environmentId, row);
}

async function findRow(sql: Db, environmentId: string): Promise<Row | null> {
  const [row]: [Row?] = await sql`
    select url, secret_sealed, updated_at, updated_by, key_agent_id
    from webhook_endpoints where environment_id = ${environmentId}`;
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
