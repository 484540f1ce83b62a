import type { ErrorRequestHandler, Response } from 'express';
import { Router } from 'express';
import { findConnectionById } from '../../activities/db/connections.js';
import { findLinkByToken, type ConnectLink } from '../../activities/db/connect-links.js';
import { getConnectSettings } from '../../activities/db/connect-settings.js';
import {
  createOAuthAttempt,
  findAttemptByState,
  parkCallback,
} from '../../activities/db/oauth-attempts.js';
import { oauth, oauthConfiguration } from '../../activities/oauth/client.js';
import { chooseClientForNewConnection } from '../../activities/oauth/credentials.js';
import { appEndpoints } from '../../activities/oauth/endpoints.js';
import { CONNECT_CALLBACK_PATH } from '../../activities/oauth/exchange-code.js';
import { findApp, type AppDefinition } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../app.js';
import { FLOW_PROBLEMS, type FlowProblem } from '../connect/flow-errors.js';
import {
  CONTENT_SECURITY_POLICY,
  DEFAULT_BRANDING,
  renderConnectPage,
  renderErrorPage,
  renderSuccessPage,
  type ConnectBranding,
} from '../connect/pages/index.js';
import { ConnectionWorkflows } from '../temporal/connection-workflows.js';

/** How long a user may spend at the app's consent page before the callback is refused. */
const ATTEMPT_TTL_SECONDS = 15 * 60;

function sendPage(res: Response, status: number, page: string): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(page);
}

function problemPage(
  res: Response,
  problem: FlowProblem,
  branding: ConnectBranding,
  app?: AppDefinition,
) {
  const text = FLOW_PROBLEMS[problem];
  const names = { displayName: branding.displayName, appName: app?.name ?? 'the app' };
  sendPage(
    res,
    text.status,
    renderErrorPage({
      branding,
      ...(app ? { app: { id: app.id, name: app.name } } : {}),
      title: text.title,
      message: text.message(names),
      code: problem,
    }),
  );
}

/**
 * The hosted connect flow (DESIGN.md §5), public and keyless: the link page, the redirect to the
 * app's consent page (state + PKCE), and the callback, whose code is exchanged by a workflow.
 */
export function connectFlowRoutes(deps: ApiDeps): Router {
  const router = Router();
  const workflows = new ConnectionWorkflows(deps.temporal, deps.config.temporal.taskQueue);
  const brandingOf = async (environmentId: string): Promise<ConnectBranding> => {
    const settings = await getConnectSettings(deps.sql, environmentId);
    return { ...settings, theme: { ...DEFAULT_BRANDING.theme, ...settings.theme } };
  };

  /** A link that can still be used, or the problem that stops it. */
  async function usableLink(
    token: string,
  ): Promise<
    | { link: ConnectLink; app: AppDefinition; branding: ConnectBranding }
    | { problem: FlowProblem; branding: ConnectBranding; app?: AppDefinition }
  > {
    const link = /^[A-Za-z0-9_-]{20,64}$/.test(token)
      ? await findLinkByToken(deps.sql, token)
      : null;
    if (!link) return { problem: 'link_invalid', branding: DEFAULT_BRANDING };
    const branding = await brandingOf(link.environmentId);
    const app = findApp(link.app);
    if (!app) return { problem: 'link_invalid', branding };
    if (link.usedAt) return { problem: 'link_used', branding, app };
    if (link.expiresAt < new Date()) return { problem: 'link_expired', branding, app };
    if (link.connectionId) {
      const connection = await findConnectionById(deps.sql, link.connectionId);
      if (!connection || connection.status === 'revoked')
        return { problem: 'connection_revoked', branding, app };
    }
    return { link, app, branding };
  }

  // Before `/connect/:token`, which would otherwise take `callback` for a token.
  router.get(CONNECT_CALLBACK_PATH, async (req, res) => {
    const query = new URL(req.originalUrl, 'http://callback').searchParams;
    const state = query.get('state');
    const attempt = state ? await findAttemptByState(deps.sql, state) : null;
    const [row]: [{ environmentId: string; app: string; redirectUrl: string | null }?] = attempt
      ? await deps.sql`select environment_id, app, redirect_url from connect_links where id = ${attempt.linkId}`
      : [];
    if (!attempt || !row) {
      problemPage(res, 'invalid_state', DEFAULT_BRANDING);
      return;
    }
    const branding = await brandingOf(row.environmentId);
    const app = findApp(row.app);
    if (attempt.consumedAt) {
      problemPage(res, 'link_used', branding, app);
      return;
    }
    const error = query.get('error');
    if (error !== null || !query.get('code')) {
      // The user is sent back to the link to try again, so the link itself is not consumed.
      problemPage(
        res,
        error === 'access_denied' ? 'access_denied' : 'authorization_failed',
        branding,
        app,
      );
      return;
    }
    if (!(await parkCallback(deps.sql, deps.config.encryption, attempt.id, query.toString()))) {
      problemPage(res, 'link_used', branding, app);
      return;
    }
    const outcome = await workflows.completeConnection(attempt.id);
    if (!outcome.ok) {
      problemPage(res, outcome.code, branding, app);
      return;
    }
    if (row.redirectUrl) {
      const target = new URL(row.redirectUrl);
      target.searchParams.set('status', 'connected');
      target.searchParams.set('connection_id', outcome.connectionId);
      target.searchParams.set('app', row.app);
      res.set('Cache-Control', 'no-store').redirect(303, target.href);
      return;
    }
    if (!app) throw new Error(`app ${row.app} left the catalog during a connect flow`);
    sendPage(res, 200, renderSuccessPage({ branding, app: { id: app.id, name: app.name } }));
  });

  router.get('/connect/:token', async (req, res) => {
    const found = await usableLink(req.params.token);
    if ('problem' in found) {
      problemPage(res, found.problem, found.branding, found.app);
      return;
    }
    sendPage(
      res,
      200,
      renderConnectPage({
        branding: found.branding,
        app: { id: found.app.id, name: found.app.name },
        startUrl: `${deps.config.api.publicUrl}/connect/${req.params.token}/start`,
        scopes: found.app.oauth.defaultScopes,
      }),
    );
  });

  router.get('/connect/:token/start', async (req, res) => {
    const found = await usableLink(req.params.token);
    if ('problem' in found) {
      problemPage(res, found.problem, found.branding, found.app);
      return;
    }
    const { link, app, branding } = found;
    const client = await chooseClientForNewConnection(
      deps.sql,
      deps.config,
      link.environmentId,
      app.id,
    );
    if (!client) {
      problemPage(res, 'app_not_configured', branding, app);
      return;
    }
    const state = oauth.randomState();
    const codeVerifier = oauth.randomPKCECodeVerifier();
    await createOAuthAttempt(deps.sql, deps.config.encryption, {
      linkId: link.id,
      state,
      codeVerifier,
      ttlSeconds: ATTEMPT_TTL_SECONDS,
    });
    const configuration = oauthConfiguration(
      app,
      appEndpoints(app, deps.config.apps.urls),
      client.credentials,
    );
    const url = oauth.buildAuthorizationUrl(configuration, {
      redirect_uri: `${deps.config.api.publicUrl}${CONNECT_CALLBACK_PATH}`,
      // Some apps (Notion) grant access by capability, not by scope: send none rather than empty.
      ...(app.oauth.defaultScopes.length > 0
        ? { scope: app.oauth.defaultScopes.join(app.oauth.scopeSeparator) }
        : {}),
      state,
      ...(app.oauth.pkce
        ? {
            code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
            code_challenge_method: 'S256',
          }
        : {}),
      ...app.oauth.extraAuthorizationParams,
    });
    res.set('Cache-Control', 'no-store').redirect(302, url.href);
  });

  // A person is looking at these pages: failures end on a branded page, not a JSON envelope.
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    req.log.error({ err }, 'connect flow failed');
    problemPage(res, 'internal_error', DEFAULT_BRANDING);
  };
  router.use(onError);
  return router;
}
