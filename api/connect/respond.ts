import type { Response } from 'express';
import { FLOW_PROBLEMS, type FlowProblem } from './flow-errors.js';
import {
  CONTENT_SECURITY_POLICY,
  renderErrorPage,
  type AppInfo,
  type ConnectBranding,
} from './pages/index.js';
import { productName } from './pages/theme.js';

/** Sends a hosted page with the headers every one of them needs (strict CSP, never cached). */
export function sendPage(
  res: Response,
  status: number,
  page: string,
  referrer: 'no-referrer' | 'strict-origin' = 'no-referrer',
): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Cache-Control': 'no-store',
      'Referrer-Policy': referrer,
      'X-Content-Type-Options': 'nosniff',
    })
    .send(page);
}

/** The branded page of a flow problem, with its HTTP status. */
export function problemPage(
  res: Response,
  problem: FlowProblem,
  branding: ConnectBranding,
  app?: AppInfo,
) {
  const text = FLOW_PROBLEMS[problem];
  const names = { product: productName(branding), appName: app?.name ?? 'the app' };
  sendPage(
    res,
    text.status,
    renderErrorPage({
      branding,
      ...(app ? { app: { id: app.id, name: app.name } } : {}),
      title: text.title,
      message: text.message(names),
      code: problem,
      supportFirst: text.supportFirst === true,
    }),
  );
}
