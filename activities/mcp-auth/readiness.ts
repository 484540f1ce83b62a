import type { McpReadiness, McpReadinessInput } from '../../workflows/mcp-connect-types.js';
import { findEnvironmentById } from '../db/environments.js';
import { findMcpApp } from '../db/mcp-apps.js';
import { authFetch } from './auth-fetch.js';
import { metadataUrlOf, type McpAuthDeps } from './deps.js';
import { DiscoveryUnreachable, MetadataMismatch, discoverAuthorization } from './discovery.js';
import { planIdentity } from './identity.js';

/**
 * Whether a connect link for an MCP app can work, asked when the link is created, so
 * its creator learns what to set before an end user meets a broken page: the same discovery and
 * choice as the start of a connect, without registering or recording anything.
 */
export async function mcpConnectReadiness(
  deps: McpAuthDeps,
  input: McpReadinessInput,
): Promise<McpReadiness> {
  const { sql, config } = deps;
  const [app, environment] = await Promise.all([
    findMcpApp(sql, input.environmentId, input.appId),
    findEnvironmentById(sql, input.environmentId),
  ]);
  if (!app || !environment) throw new Error(`no MCP app ${input.appId} in ${input.environmentId}`);
  let discovery;
  try {
    discovery = await discoverAuthorization(app.serverUrl, authFetch(config));
  } catch (error) {
    if (error instanceof MetadataMismatch) return { ready: false, ...error.notReady };
    if (!(error instanceof DiscoveryUnreachable)) throw error;
    return { ready: false, reason: 'unreachable', detail: error.message };
  }
  const plan = await planIdentity(
    {
      sql,
      config,
      environmentId: input.environmentId,
      appId: app.id,
      metadataUrl: metadataUrlOf(deps, environment.name),
    },
    discovery.state,
  );
  if (!plan.ok) return { ready: false, ...plan.notReady };
  return {
    ready: true,
    clientKind: plan.identity.kind,
    issuer: discovery.state.authorizationServerUrl,
  };
}
