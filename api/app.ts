import express, { type Express } from 'express';
import type { ApiDeps } from './deps.js';
import { authenticate } from './http/authenticate.js';
import { errorHandler, notFound } from './http/errors-middleware.js';
import { idempotency } from './http/idempotency.js';
import { jsonBodiesOnly, jsonBody } from './http/json-body.js';
import { rateLimiting } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { routeTable } from './http/route-table.js';
import { responseHeaders } from './http/response-headers.js';
import { traceId } from './http/trace-id.js';
import { wellFormedQuery } from './http/well-formed-query.js';
import { actionRoutes } from './routes/actions.js';
import { appRoutes } from './routes/apps.js';
import { approvalPageRoutes } from './routes/approval-page.js';
import { approvalRoutes } from './routes/approvals.js';
import { grantRoutes } from './routes/grants.js';
import { auditIntegrityRoutes } from './routes/audit-integrity.js';
import { auditRoutes } from './routes/audit.js';
import { authConfigRoutes } from './routes/auth-configs.js';
import { codecRoutes } from './routes/codec.js';
import { connectFlowRoutes } from './routes/connect-flow.js';
import { connectLinkRoutes } from './routes/connect-links.js';
import { connectSettingsRoutes } from './routes/connect-settings.js';
import { consoleSignInRoutes } from './routes/console-sign-in.js';
import { consoleRoutes } from './routes/console.js';
import { connectionsRoutes } from './routes/connections.js';
import { docsRoutes } from './routes/docs.js';
import { fundedAccessRoutes } from './routes/funded-access.js';
import { faviconRoutes } from './routes/favicon.js';
import { healthRoutes } from './routes/health.js';
import { mcpAppRoutes } from './routes/mcp-apps.js';
import { openApiAppRoutes } from './routes/openapi-apps.js';
import { mcpClientMetadataRoutes } from './routes/mcp-client-metadata.js';
import { mcpOAuthClientRoutes } from './routes/mcp-oauth-clients.js';
import { mcpSessionRoutes } from './routes/mcp-sessions.js';
import { mcpRoutes } from './routes/mcp.js';
import { notificationChannelRoutes } from './routes/notification-channels.js';
import { notificationOptOutRoutes } from './routes/notification-opt-outs.js';
import { notificationRouteRoutes } from './routes/notification-routes.js';
import { policyRoutes } from './routes/policies.js';
import { policySimulationRoutes } from './routes/policy-simulation.js';
import { policyVersionRoutes } from './routes/policy-versions.js';
import { proxyRoutes } from './routes/proxy.js';
import { roleMappingRoutes } from './routes/role-mappings.js';
import { slackInteractionRoutes } from './slack/interactions.js';
import { usersRoutes } from './routes/users.js';
import { webhookEndpointRoutes } from './routes/webhook-endpoint.js';

/**
 * The HTTP surface, in the order a request meets it: trace id, request log, public routes
 * (health), then `/v1` behind key authentication (where a body must be JSON), then the
 * not-found (or method-not-allowed) and error envelopes.
 */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');
  const limits = rateLimiting({ limits: deps.config.rateLimits, sql: deps.sql });
  // What each path takes, read from the routes registered below: for the 405s and 415s.
  const routes = routeTable(app);

  app.use(traceId);
  app.use(responseHeaders);
  app.use(requestLog(deps.logger));
  // The proxy reads its body as raw bytes for the app, so it comes before the JSON parser.
  app.use('/v1/proxy', limits.authenticate(authenticate(deps.sql)), proxyRoutes(deps));
  // The Temporal UI's codec: full keys of the payloads' environment, its own body limit.
  app.use(codecRoutes(deps, (check) => limits.authenticate(check)));
  // Hosted pages read no query; the JSON API refuses one that does not decode (well-formed-query.ts).
  app.use('/v1', wellFormedQuery);
  // MCP parses its own body, so its failures can be JSON-RPC errors; it has its own keys.
  app.use(mcpRoutes(deps, (check) => limits.authenticate(check)));
  // Slack signs the body as it was sent: read raw, before any parser.
  app.use(slackInteractionRoutes(deps));
  app.use(jsonBody({ limitBytes: deps.config.api.bodyLimitBytes }));

  app.use(healthRoutes(deps));
  app.use(faviconRoutes());
  app.use(docsRoutes({ publicUrl: deps.config.api.publicUrl }));
  // The hosted pages count their requests once they know whether the link is any good.
  app.use(connectFlowRoutes(deps, limits.pages));
  app.use(mcpClientMetadataRoutes(deps));
  app.use(approvalPageRoutes(deps, limits.pages));
  // The console: people signed in with the identity provider; keys mean nothing there.
  app.use(consoleSignInRoutes(deps, limits.pages));
  app.use(consoleRoutes(deps));

  app.use('/v1', limits.authenticate(authenticate(deps.sql)));
  app.use('/v1', jsonBodiesOnly(routes));
  app.use(idempotency(deps.sql, deps.config.encryption));
  app.use(fundedAccessRoutes(deps));
  app.use(mcpOAuthClientRoutes(deps));
  app.use(mcpAppRoutes(deps));
  app.use(openApiAppRoutes(deps));
  app.use(authConfigRoutes(deps));
  app.use(connectSettingsRoutes(deps));
  app.use(roleMappingRoutes(deps));
  app.use(notificationChannelRoutes(deps));
  app.use(notificationRouteRoutes(deps));
  app.use(notificationOptOutRoutes(deps));
  app.use(usersRoutes(deps));
  app.use(connectionsRoutes(deps));
  app.use(connectLinkRoutes(deps));
  app.use(policyRoutes(deps));
  app.use(policyVersionRoutes(deps));
  app.use(policySimulationRoutes(deps));
  app.use(webhookEndpointRoutes(deps));
  app.use(appRoutes(deps));
  app.use(actionRoutes(deps));
  app.use(mcpSessionRoutes(deps));
  app.use(approvalRoutes(deps));
  app.use(grantRoutes(deps));
  // Before auditRoutes: `/v1/audit/:event_id` would take `checkpoints` and `export` for ids.
  app.use(auditIntegrityRoutes(deps));
  app.use(auditRoutes(deps));

  app.use(notFound(routes));
  app.use(errorHandler({ bodyLimitBytes: deps.config.api.bodyLimitBytes }));
  return app;
}
