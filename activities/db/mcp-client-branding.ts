import type { Db } from '../../infra/database/client.js';

/** The client metadata (RFC 7591 names) an environment's MCP OAuth clients present. */
export interface McpClientBrandingInput {
  clientName: string;
  logoUri: string | null;
  clientUri: string | null;
  policyUri: string | null;
  tosUri: string | null;
}

export interface McpClientBranding extends McpClientBrandingInput {
  updatedAt: Date;
  updatedBy: string;
}

/** Null until the environment first sets it: there is no sensible default name to claim. */
export async function getMcpClientBranding(
  sql: Db,
  environmentId: string,
): Promise<McpClientBranding | null> {
  const [row]: [McpClientBranding?] = await sql`
    select client_name, logo_uri, client_uri, policy_uri, tos_uri, updated_at, updated_by
    from mcp_client_branding where environment_id = ${environmentId}`;
  return row ?? null;
}

/** Replaces the whole branding: a URI left out is cleared, as PUT means. */
export async function saveMcpClientBranding(
  sql: Db,
  environmentId: string,
  branding: McpClientBrandingInput,
  updatedBy: string,
): Promise<McpClientBranding> {
  const [row]: [McpClientBranding?] = await sql`
    insert into mcp_client_branding (environment_id, client_name, logo_uri, client_uri, policy_uri, tos_uri, updated_by)
    values (${environmentId}, ${branding.clientName}, ${branding.logoUri}, ${branding.clientUri},
            ${branding.policyUri}, ${branding.tosUri}, ${updatedBy})
    on conflict (environment_id) do update set
      client_name = excluded.client_name, logo_uri = excluded.logo_uri, client_uri = excluded.client_uri,
      policy_uri = excluded.policy_uri, tos_uri = excluded.tos_uri,
      updated_by = excluded.updated_by, updated_at = now()
    returning client_name, logo_uri, client_uri, policy_uri, tos_uri, updated_at, updated_by`;
  if (!row) throw new Error('MCP client branding upsert returned nothing');
  return row;
}
