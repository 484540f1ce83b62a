import type { Request } from 'express';

/**
 * Browsers say where a form was posted from; when they do, it must be the console's own origin.
 * A browser that says nothing is still held to the form's token.
 */
export function crossSite(req: Request, publicUrl: string): boolean {
  const origin = req.get('origin');
  if (origin !== undefined && origin !== new URL(publicUrl).origin) return true;
  const site = req.get('sec-fetch-site');
  return site !== undefined && site !== 'same-origin';
}
