import { v7 as uuidv7 } from 'uuid';
import type { Db, Sql } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';

/**
 * A dynamic client registration (RFC 7591) Gatehouse made with an MCP app's authorization
 * server. `registration` is the server's answer as the SDK keeps it (client id, secret, the
 * metadata it accepted, `issuer` stamped by the SDK): sealed at rest, opened only here.
 */
export interface McpClientRegistration {
  id: string;
  environmentId: string;
  issuer: string;
  redirectUri: string;
  clientId: string;
  metadataSha256: string;
  status: 'current' | 'replaced' | 'refused';
  registration: Record<string, unknown>;
}

interface Row {
  id: string;
  environmentId: string;
  issuer: string;
  redirectUri: string;
  clientId: string;
  metadataSha256: string;
  status: McpClientRegistration['status'];
  registrationSealed: string;
}

// Bound to the row: a sealed registration copied to another row does not open.
const registrationAad = (id: string) => `mcp_client_registration:${id}:registration`;

function opened(keyring: Keyring, row: Row): McpClientRegistration {
  return {
    id: row.id,
    environmentId: row.environmentId,
    issuer: row.issuer,
    redirectUri: row.redirectUri,
    clientId: row.clientId,
    metadataSha256: row.metadataSha256,
    status: row.status,
    registration: JSON.parse(
      open(keyring, row.registrationSealed, registrationAad(row.id)),
    ) as Record<string, unknown>,
  };
}

const columns = (sql: Db) => sql`
  id, environment_id, issuer, redirect_uri, client_id, metadata_sha256, status, registration_sealed`;

/** The registration new connects to this authorization server use, if there is one. */
export async function findCurrentRegistration(
  sql: Db,
  keyring: Keyring,
  key: { environmentId: string; issuer: string; redirectUri: string },
): Promise<McpClientRegistration | null> {
  const [row]: [Row?] = await sql`
    select ${columns(sql)} from mcp_client_registrations
    where environment_id = ${key.environmentId} and issuer = ${key.issuer}
      and redirect_uri = ${key.redirectUri} and status = 'current'`;
  return row ? opened(keyring, row) : null;
}

export async function findRegistration(
  sql: Db,
  keyring: Keyring,
  id: string,
): Promise<McpClientRegistration | null> {
  const [row]: [Row?] = await sql`
    select ${columns(sql)} from mcp_client_registrations where id = ${id}`;
  return row ? opened(keyring, row) : null;
}

/**
 * Stores a new registration as the current one for its issuer and redirect URI; the one it
 * replaces stays for the connections made with it. One transaction, so two connects registering
 * at once leave one current registration (the later), never two.
 */
export async function saveRegistration(
  sql: Sql,
  keyring: Keyring,
  input: {
    environmentId: string;
    issuer: string;
    redirectUri: string;
    clientId: string;
    metadataSha256: string;
    registration: Record<string, unknown>;
  },
): Promise<string> {
  const id = uuidv7();
  const sealed = seal(keyring, JSON.stringify(input.registration), registrationAad(id));
  await sql.begin(async (tx) => {
    // Two connects registering at once take turns, so neither meets the other's current row.
    await tx`select pg_advisory_xact_lock(hashtext(${`mcp-registration:${input.environmentId}:${input.issuer}:${input.redirectUri}`}))`;
    await tx`
      update mcp_client_registrations set status = 'replaced', ended_at = now()
      where environment_id = ${input.environmentId} and issuer = ${input.issuer}
        and redirect_uri = ${input.redirectUri} and status = 'current'`;
    await tx`
      insert into mcp_client_registrations (id, environment_id, issuer, redirect_uri, client_id,
        registration_sealed, metadata_sha256)
      values (${id}, ${input.environmentId}, ${input.issuer}, ${input.redirectUri}, ${input.clientId},
        ${sealed}, ${input.metadataSha256})`;
  });
  return id;
}

/** The authorization server refused it (`invalid_client`): the next connect registers anew. */
export async function markRegistrationRefused(sql: Db, id: string): Promise<void> {
  await sql`
    update mcp_client_registrations set status = 'refused', ended_at = coalesce(ended_at, now())
    where id = ${id} and status <> 'refused'`;
}
