import type { Response } from 'express';
import { CONTENT_SECURITY_POLICY } from '../connect/pages/index.js';

/**
 * Sends a console page: the hosted pages' CSP (no scripts, no framing, forms to this origin
 * only), never cached (pages show live state and a person's data), and `strict-origin`, so a
 * form's POST carries the origin the routes check and never a path.
 */
export function sendConsolePage(res: Response, status: number, page: string): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'strict-origin',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(page);
}
