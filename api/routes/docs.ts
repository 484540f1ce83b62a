import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import { connectedUsersDocument, managementDocument } from '../openapi/documents.js';

/** The OpenAPI documents (DESIGN.md §7) and interactive docs over both, served from this process. */
export function docsRoutes(deps: { publicUrl: string }): Router {
  const router = Router();
  const management = managementDocument(deps.publicUrl);
  const connectedUsers = connectedUsersDocument(deps.publicUrl);
  router.get('/openapi/management.json', (_req, res) => {
    res.json(management);
  });
  router.get('/openapi/connected-users.json', (_req, res) => {
    res.json(connectedUsers);
  });
  router.use(
    '/docs',
    swaggerUi.serve,
    swaggerUi.setup(undefined, {
      customSiteTitle: 'Gatehouse API',
      explorer: true,
      swaggerOptions: {
        urls: [
          { url: '/openapi/management.json', name: 'management API' },
          { url: '/openapi/connected-users.json', name: 'connected-user API' },
        ],
      },
    }),
  );
  return router;
}
