import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import { adminRouter, type AdminControls } from './admin-api.js';
import { bearerAuth } from './bearer-auth.js';
import { faultMiddleware } from './faults.js';
import { interactionRouter } from './interactions.js';
import { openApiRouter } from './openapi-document.js';
import type { Store } from './store.js';
import { tasksRouter } from './tasks-api.js';

export interface HttpAppDeps {
  /** The app's own base URL (its issuer): its OpenAPI document's URLs are built from it. */
  baseUrl: string;
  provider: Provider;
  store: Store;
  controls: AdminControls;
  /** Aborted when the app stops, to cut short responses held back by the `slow` fault. */
  stopping: AbortSignal;
  logger: Logger | undefined;
}

const API_PATHS = ['/tasks', '/me'];

/** Routes: admin, interaction pages and the resource API first; everything else is OAuth. */
export function buildHttpApp({
  baseUrl,
  provider,
  store,
  controls,
  stopping,
  logger,
}: HttpAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/__admin', adminRouter(controls));
  app.use(openApiRouter(baseUrl));
  app.use(interactionRouter(provider));

  app.use(API_PATHS, (_req, _res, next) => {
    controls.stats.countApiRequest();
    next();
  });
  app.use(API_PATHS, faultMiddleware(controls.faults, stopping));
  app.use(API_PATHS, bearerAuth(provider), express.json({ limit: '100kb' }));
  app.use(tasksRouter(store));
  app.use(API_PATHS, (_req, res) => {
    res.status(404).json({ error: 'not_found' });
  });

  // oidc-provider parses its own request bodies, so no body parser may run before it.
  const oidc = provider.callback();
  app.use((req, res, next) => {
    oidc(req, res).catch(next);
  });
  app.use(errorHandler(logger));
  return app;
}

function errorHandler(logger: Logger | undefined): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (error instanceof SyntaxError && 'type' in error && error.type === 'entity.parse.failed') {
      res.status(400).json({ error: 'invalid_json' });
      return;
    }
    if (logger) logger.error({ err: error }, 'demo-app request failed');
    else console.error('demo-app: request failed', error);
    if (res.headersSent) res.destroy();
    else res.status(500).json({ error: 'server_error' });
  };
}
