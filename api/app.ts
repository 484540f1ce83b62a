import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Config } from '../infra/config.js';
import type { Sql } from '../infra/database/client.js';
import type { Logger } from '../infra/logger.js';
import { authenticate } from './http/authenticate.js';
import { errorHandler, notFound } from './http/errors-middleware.js';
import { traceId } from './http/trace-id.js';
import { docsRoutes } from './routes/docs.js';
import { fundedAccessRoutes } from './routes/funded-access.js';
import { healthRoutes } from './routes/health.js';

export interface ApiDeps {
  config: Config;
  sql: Sql;
  temporal: Client;
  logger: Logger;
}

/**
 * The HTTP surface, in the order a request meets it: trace id, request log, public routes
 * (health), then `/v1` behind key authentication, then the not-found and error envelopes.
 */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');

  app.use(traceId);
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (_req, res) => (res as express.Response).locals.traceId,
      customAttributeKeys: { reqId: 'traceId' },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      autoLogging: { ignore: (req) => req.url === '/healthz' },
    }),
  );
  app.use(
    express.json({
      limit: deps.config.api.bodyLimitBytes,
      type: ['application/json', 'application/*+json'],
    }),
  );

  app.use(healthRoutes(deps));
  app.use(docsRoutes({ publicUrl: deps.config.api.publicUrl }));

  app.use('/v1', authenticate(deps.sql));
  app.use(fundedAccessRoutes(deps));

  app.use(notFound);
  app.use(errorHandler({ bodyLimitBytes: deps.config.api.bodyLimitBytes }));
  return app;
}
