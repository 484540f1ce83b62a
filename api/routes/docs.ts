import { Router, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { connectedUsersDocument, managementDocument } from '../openapi/documents.js';

/**
 * The policy of /docs, its page and its assets alike. swagger-ui runs from its own files here
 * (no inline script, no eval), so scripts come from 'self' only. Styles need 'unsafe-inline':
 * the page carries two <style> blocks and swagger-ui's React components set style attributes,
 * which no hash can cover; inline style cannot run code. Icons are data: URIs in its CSS; it loads no fonts.
 * "Try it out" calls the API at the documents' server URL, which is this origin unless
 * PUBLIC_URL names another.
 */
export function docsContentSecurityPolicy(publicUrl: string): string {
  const publicOrigin = new URL(publicUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    `connect-src 'self' ${publicOrigin}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The OpenAPI documents (DESIGN.md §7) and interactive docs over both, served from this process. */
export function docsRoutes(deps: { publicUrl: string }): Router {
  const router = Router();
  const management = managementDocument(deps.publicUrl);
  const connectedUsers = connectedUsersDocument(deps.publicUrl);
  const policy = docsContentSecurityPolicy(deps.publicUrl);
  const withPolicy: RequestHandler = (_req, res, next) => {
    res.setHeader('Content-Security-Policy', policy);
    next();
  };
  router.get('/openapi/management.json', (_req, res) => {
    res.json(management);
  });
  router.get('/openapi/connected-users.json', (_req, res) => {
    res.json(connectedUsers);
  });
  router.use(
    '/docs',
    withPolicy,
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Gatehouse API',
      explorer: true,
      swaggerOptions: {
        urls: [
          { url: '/openapi/management.json', name: 'management API' },
          { url: '/openapi/connected-users.json', name: 'connected-user API' },
        ],
        // The default sends each document's URL to validator.swagger.io for a badge.
        validatorUrl: null,
      },
    }),
  );
  return router;
}
