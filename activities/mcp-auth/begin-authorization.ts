import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../infra/database/client.js';
import type { McpStartInput, McpStartOutcome } from '../../workflows/mcp-connect-types.js';
import { findLinkById } from '../db/connect-links.js';
import { findEnvironmentById } from '../db/environments.js';
import { findMcpApp } from '../db/mcp-apps.js';
import {
  findConnectionAuthorization,
  saveAttemptAuthorization,
  type McpAttemptAuthorization,
} from '../db/mcp-authorizations.js';
import { markRegistrationRefused, saveRegistration } from '../db/mcp-client-registrations.js';
import { createOAuthAttempt } from '../db/oauth-attempts.js';
import { ATTEMPT_TTL_SECONDS } from '../oauth/authorization-url.js';
import { connectRedirectUri } from '../oauth/redirect-uri.js';
import { authFetch } from './auth-fetch.js';
import { DiscoveryUnreachable, MetadataMismatch, discoverAuthorization } from './discovery.js';
import { planIdentity } from './identity.js';
import { GatehouseOAuthProvider } from './provider.js';
import { clientForIdentity, isGone } from './provider-client.js';
import { metadataUrlOf, type McpAuthDeps } from './deps.js';

/**
 * `/connect/<token>/start` for an MCP app: discovers the server's authorization
 * server, decides who Gatehouse is there (identity.ts), and lets the SDK's `auth()` register
 * if it must and build the authorize URL (resource indicator, scope, PKCE S256, state). The
 * attempt is recorded with what it presented, so the callback's exchange goes to the same
 * server with the same client, and with the issuer its response must name (RFC 9207). A
 * reconnect asks for the scope its connection stepped up to.
 */
export async function beginMcpAuthorization(
  deps: McpAuthDeps,
  input: McpStartInput,
): Promise<McpStartOutcome> {
  const { sql, config, logger } = deps;
  const link = await findLinkById(sql, input.linkId);
  const app = link ? await findMcpApp(sql, link.environmentId, link.app) : null;
  const environment = link ? await findEnvironmentById(sql, link.environmentId) : null;
  if (!link || !app || !environment) return { ok: false, code: 'link_invalid' };
  if (link.usedAt) return { ok: false, code: 'link_used' };
  if (link.expiresAt < new Date()) return { ok: false, code: 'link_expired' };
  const log = { app: app.id, environmentId: link.environmentId, attemptId: input.attemptId };

  const fetchFn = authFetch(config);
  let discovery;
  try {
    discovery = await discoverAuthorization(app.serverUrl, fetchFn);
  } catch (error) {
    if (error instanceof MetadataMismatch) {
      // The operator learns which document named whom; the user, that the app is not trusted.
      logger.warn({ ...log, notReady: error.notReady }, 'MCP authorization metadata refused');
      return { ok: false, code: 'app_untrusted' };
    }
    if (!(error instanceof DiscoveryUnreachable)) throw error;
    logger.warn({ ...log, error: error.message }, 'MCP authorization discovery failed');
    return { ok: false, code: 'app_unavailable' };
  }
  const plan = await planIdentity(
    {
      sql,
      config,
      environmentId: link.environmentId,
      appId: app.id,
      metadataUrl: metadataUrlOf(deps, environment.name),
    },
    discovery.state,
  );
  if (!plan.ok) {
    logger.warn({ ...log, notReady: plan.notReady }, 'MCP app cannot be connected');
    return { ok: false, code: 'app_not_configured' };
  }
  const client = await clientForIdentity(
    deps,
    link.environmentId,
    plan.identity,
    discovery.state.authorizationServerUrl,
  );
  if (isGone(client)) return { ok: false, code: 'app_not_configured' };

  const redirectUri = connectRedirectUri(config.api);
  const previous = link.connectionId
    ? await findConnectionAuthorization(sql, link.connectionId)
    : null;
  const scope = previous?.stepUpScope ?? discovery.challenge.scope;
  const state = randomBytes(32).toString('base64url');
  const provider = new GatehouseOAuthProvider({
    phase: 'start',
    redirectUrl: redirectUri,
    discovery: discovery.state,
    client,
    state,
    saveRegistration: (information) =>
      saveRegistration(sql, config.encryption, {
        environmentId: link.environmentId,
        issuer: discovery.state.authorizationServerUrl,
        redirectUri,
        clientId: information.client_id,
        metadataSha256: plan.identity.kind === 'dcr' ? plan.identity.metadataSha256 : '',
        registration: information,
      }),
    registrationRefused: (id) => markRegistrationRefused(sql, id),
  });
  try {
    await auth(provider, {
      serverUrl: app.serverUrl,
      ...(scope ? { scope } : {}),
      ...(discovery.challenge.resourceMetadataUrl
        ? { resourceMetadataUrl: discovery.challenge.resourceMetadataUrl }
        : {}),
      fetchFn,
    });
  } catch (error) {
    // The message only: no secret is in it, but a request's parameters could be.
    logger.warn(
      { ...log, error: error instanceof Error ? error.message : 'unknown' },
      'MCP authorization could not start',
    );
    return {
      ok: false,
      code: error instanceof OAuthError ? 'app_not_configured' : 'app_unavailable',
    };
  }
  const url = provider.authorizationUrl;
  const codeVerifier = provider.savedCodeVerifier;
  if (!url || !codeVerifier) throw new Error('the SDK neither redirected nor failed');
  // planIdentity refused a server without metadata, so there is an issuer to hold responses to.
  const metadata = discovery.state.authorizationServerMetadata;
  if (!metadata) throw new Error('an authorization started without metadata');

  const presented: McpAttemptAuthorization = {
    clientKind: plan.identity.kind,
    mcpOAuthClientId: client.kind === 'byo' ? client.credentials.id : null,
    registrationId:
      client.kind === 'dcr' ? (provider.newRegistrationId ?? client.registrationId) : null,
    clientId: url.searchParams.get('client_id') ?? '',
    serverUrl: app.serverUrl,
    issuer: discovery.state.authorizationServerUrl,
    // What the authorize request carried, verbatim: the token requests send the same.
    resource: url.searchParams.get('resource'),
    scope: url.searchParams.get('scope'),
    discovery: discovery.state,
    responseIssuer: { issuer: metadata.issuer, required: discovery.issParameterSupported },
  };
  await recordAttempt(sql, deps, input, { state, codeVerifier }, presented);
  return { ok: true, authorizationUrl: url.href };
}

async function recordAttempt(
  sql: Sql,
  deps: McpAuthDeps,
  input: McpStartInput,
  secrets: { state: string; codeVerifier: string },
  presented: McpAttemptAuthorization,
): Promise<void> {
  await sql.begin(async (tx) => {
    await createOAuthAttempt(tx, deps.config.encryption, {
      id: input.attemptId,
      linkId: input.linkId,
      ...secrets,
      browser: {
        ref: input.browser.ref,
        secretHash: Buffer.from(input.browser.secretSha256Hex, 'hex'),
      },
      ttlSeconds: ATTEMPT_TTL_SECONDS,
    });
    await saveAttemptAuthorization(tx, input.attemptId, presented);
  });
}
