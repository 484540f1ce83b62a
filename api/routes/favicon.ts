import { Router } from 'express';

/** Gatehouse's mark, so a browser tab on /docs or a hosted page shows it instead of a 404. */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#4f46e5"/><path d="M9 25V11l7-4 7 4v14h-4v-8h-6v8z" fill="#fff"/></svg>`;

export function faviconRoutes(): Router {
  const router = Router();
  // Browsers ask for /favicon.ico whatever the page says; an SVG answers both names.
  for (const path of ['/favicon.ico', '/favicon.svg']) {
    router.get(path, (_req, res) => {
      res
        .type('image/svg+xml')
        .set('Cache-Control', 'public, max-age=86400')
        .set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(FAVICON);
    });
  }
  return router;
}
