import { Router, type RequestHandler } from 'express';
import swaggerUi from 'swagger-ui-express';
import { connectedUsersDocument, docsDocument, managementDocument } from '../openapi/documents.js';

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

/**
 * The documents /docs offers, first the one it opens on: both interfaces on one page by resource,
 * so a newcomer meets connect links and calls first, not the settings.
 */
export const DOCS_DOCUMENTS = [
  { url: '/openapi/docs.json', name: 'Gatehouse API (all operations, by resource)' },
  { url: '/openapi/connected-users.json', name: 'connected-user API' },
  { url: '/openapi/management.json', name: 'management API' },
] as const;

/** The OpenAPI documents and interactive docs over them, served from this process. */
export function docsRoutes(deps: { publicUrl: string }): Router {
  const router = Router();
  const management = managementDocument(deps.publicUrl);
  const connectedUsers = connectedUsersDocument(deps.publicUrl);
  const docs = docsDocument(deps.publicUrl);
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
  router.get('/openapi/docs.json', (_req, res) => {
    res.json(docs);
  });
  router.use(
    '/docs',
    withPolicy,
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Gatehouse API',
      explorer: true,
      swaggerOptions: {
        urls: DOCS_DOCUMENTS,
        // Tags in the documents' order (resources as a newcomer meets them), operations as
        // registered; the page opens with the sections folded, so the resources show first.
        docExpansion: 'list',
        // A long page: find an operation or resource by typing part of its tag.
        filter: true,
        // The default sends each document's URL to validator.swagger.io for a badge.
        validatorUrl: null,
      },
    }),
  );
  return router;
}
