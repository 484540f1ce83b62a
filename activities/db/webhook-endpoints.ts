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
}

interface Row {
  url: string;
  secretSealed: string;
  updatedAt: Date;
  updatedBy: string;
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

export async function setWebhookEndpoint(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  input: { url: string; secret: string },
  updatedBy: string,
): Promise<WebhookEndpointView> {
  const [row]: [Row?] = await sql`
    insert into webhook_endpoints (environment_id, url, secret_sealed, updated_by)
    values (${environmentId}, ${input.url},
            ${seal(keyring, input.secret, secretAad(environmentId))}, ${updatedBy})
    on conflict (environment_id) do update
      set url = excluded.url, secret_sealed = excluded.secret_sealed,
          updated_by = excluded.updated_by, updated_at = now()
    returning url, secret_sealed, updated_at, updated_by`;
  if (!row) throw new Error('webhook endpoint upsert returned nothing');
  return view(keyring, environmentId, row);
}

async function findRow(sql: Db, environmentId: string): Promise<Row | null> {
  const [row]: [Row?] = await sql`
    select url, secret_sealed, updated_at, updated_by
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
  return { url: row.url, secret: open(keyring, row.secretSealed, secretAad(environmentId)) };
}

/** False when the environment had no endpoint. */
export async function deleteWebhookEndpoint(sql: Db, environmentId: string): Promise<boolean> {
  const rows = await sql`delete from webhook_endpoints where environment_id = ${environmentId}`;
  return rows.count > 0;
}
