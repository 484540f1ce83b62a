import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type postgres from 'postgres';
import type { Db } from '../../infra/database/client.js';

/** How Gatehouse identified itself: an MCP OAuth client, its metadata document, or a registration. */
export type McpClientKind = 'byo' | 'cimd' | 'dcr';

/**
 * What an authorization with an MCP app's authorization server was made with: kept per connect
 * attempt (the exchange uses it) and then per connection (refreshes use it). No secret here:
 * a BYO client's secret is read from its own row at each token request, a registration's from
 * its sealed row.
 */
export interface McpAuthorization {
  clientKind: McpClientKind;
  mcpOAuthClientId: string | null;
  registrationId: string | null;
  /** The client id presented (a CIMD's is its URL). */
  clientId: string;
  serverUrl: string;
  /** The authorization server's URL, as discovery found it (the SDK's issuer binding). */
  issuer: string;
  /** The RFC 8707 resource indicator sent, verbatim; null when the server has no resource metadata. */
  resource: string | null;
  scope: string | null;
  discovery: OAuthDiscoveryState;
}

/**
 * What an attempt's authorization response must say in `iss` (RFC 9207): `issuer` is the
 * authorization server metadata's `issuer`, verbatim; `required` when that metadata says
 * `authorization_response_iss_parameter_supported`, so a response without `iss` is refused too.
 */
export interface ResponseIssuer {
  issuer: string;
  required: boolean;
}

/** A connect attempt's authorization, and what its response must say of its issuer. */
export interface McpAttemptAuthorization extends McpAuthorization {
  responseIssuer: ResponseIssuer;
}

export interface McpConnectionAuth extends McpAuthorization {
  connectionId: string;
  stepUpScope: string | null;
}

/** Discovery state is plain JSON (URLs and the servers' metadata documents as parsed). */
const discoveryJson = (sql: Db, discovery: OAuthDiscoveryState) =>
  sql.json(JSON.parse(JSON.stringify(discovery)) as postgres.JSONValue);

// `mcpOAuthClientId`: the column's camel case would read `mcpOauthClientId`.
const fields = (sql: Db) => sql`
  client_kind, mcp_oauth_client_id as "mcpOAuthClientId", registration_id, client_id, server_url,
  issuer, resource, scope, discovery`;

export async function saveAttemptAuthorization(
  sql: Db,
  attemptId: string,
  auth: McpAttemptAuthorization,
): Promise<void> {
  await sql`
    insert into mcp_oauth_attempts (attempt_id, client_kind, mcp_oauth_client_id, registration_id,
      client_id, server_url, issuer, resource, scope, discovery, response_issuer,
      response_issuer_required)
    values (${attemptId}, ${auth.clientKind}, ${auth.mcpOAuthClientId}, ${auth.registrationId},
      ${auth.clientId}, ${auth.serverUrl}, ${auth.issuer}, ${auth.resource}, ${auth.scope},
      ${discoveryJson(sql, auth.discovery)}, ${auth.responseIssuer.issuer},
      ${auth.responseIssuer.required})`;
}

type AttemptRow = McpAuthorization & { responseIssuer: string; responseIssuerRequired: boolean };

export async function findAttemptAuthorization(
  sql: Db,
  attemptId: string,
): Promise<McpAttemptAuthorization | null> {
  const [row]: [AttemptRow?] = await sql`
    select ${fields(sql)}, response_issuer, response_issuer_required
    from mcp_oauth_attempts where attempt_id = ${attemptId}`;
  if (!row) return null;
  const { responseIssuer, responseIssuerRequired, ...authorization } = row;
  return {
    ...authorization,
    responseIssuer: { issuer: responseIssuer, required: responseIssuerRequired },
  };
}

/**
 * Records what a connection was (re)authorised with, in the transaction that stores its tokens:
 * a reconnect replaces the client (the one selected now), and a scope that now covers the
 * step-up asked for clears it.
 */
export async function saveConnectionAuthorization(
  sql: Db,
  connectionId: string,
  auth: McpAuthorization,
): Promise<void> {
  await sql`
    insert into mcp_connection_auth (connection_id, client_kind, mcp_oauth_client_id,
      registration_id, client_id, server_url, issuer, resource, scope, discovery)
    values (${connectionId}, ${auth.clientKind}, ${auth.mcpOAuthClientId}, ${auth.registrationId},
      ${auth.clientId}, ${auth.serverUrl}, ${auth.issuer}, ${auth.resource}, ${auth.scope},
      ${discoveryJson(sql, auth.discovery)})
    on conflict (connection_id) do update set
      client_kind = excluded.client_kind, mcp_oauth_client_id = excluded.mcp_oauth_client_id,
      registration_id = excluded.registration_id, client_id = excluded.client_id,
      server_url = excluded.server_url, issuer = excluded.issuer, resource = excluded.resource,
      scope = excluded.scope, discovery = excluded.discovery, step_up_scope = null,
      updated_at = now()`;
}

export async function findConnectionAuthorization(
  sql: Db,
  connectionId: string,
): Promise<McpConnectionAuth | null> {
  const [row]: [McpConnectionAuth?] = await sql`
    select connection_id, step_up_scope, ${fields(sql)} from mcp_connection_auth
    where connection_id = ${connectionId}`;
  return row ?? null;
}

/** The connection's last authorization, for its reconnect to ask the same scope and more. */
export async function saveStepUpScope(sql: Db, connectionId: string, scope: string): Promise<void> {
  await sql`
    update mcp_connection_auth set step_up_scope = ${scope}, updated_at = now()
    where connection_id = ${connectionId}`;
}
