import type { ErrorRequestHandler, Response } from 'express';
import { Router } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { findLinkById, hashToken, type ConnectLink } from '../../activities/db/connect-links.js';
import { findConnectionById } from '../../activities/db/connections.js';
import { findAttemptAuthorization } from '../../activities/db/mcp-authorizations.js';
import {
  consumeAttempt,
  findAttemptByState,
  isBoundTo,
  parkCallback,
} from '../../activities/db/oauth-attempts.js';
import { responseIssuerRefusal } from '../../activities/mcp-auth/response-issuer.js';
import { startAuthorization } from '../../activities/oauth/authorization-url.js';
import { chooseClientForNewConnection } from '../../activities/oauth/credentials.js';
import { findOAuthApp } from '../../activities/oauth/oauth-app.js';
import { CONNECT_CALLBACK_PATH } from '../../activities/oauth/redirect-uri.js';
import type { ApiDeps } from '../deps.js';
import {
  attemptCookieValue,
  clearAttemptCookie,
  newBrowserBinding,
  setAttemptCookie,
} from '../connect/attempt-cookie.js';
import { linkApp } from '../connect/link-app.js';
import { connectUrl } from '../connect/links.js';
import { brandingOf, checkLink } from '../connect/link-check.js';
import {
  DEFAULT_BRANDING,
  renderConnectPage,
  renderSuccessPage,
  type AppInfo,
  type ConnectBranding,
} from '../connect/pages/index.js';
import { requestedScopes } from '../connect/requested-scopes.js';
import { problemPage, sendPage } from '../connect/respond.js';
import { connectedThrough, setConnectedCookie } from '../connect/success-cookie.js';
import type { PageLimits } from '../http/rate-limit.js';
import { connectionWorkflowsFor } from '../temporal/connection-workflows.js';
import { connectCredentialRoutes } from './connect-credential.js';

/**
 * The hosted connect flow, public and keyless: the link page, the redirect to the app's consent
 * page (state + PKCE, and a cookie binding the attempt to this browser), and the callback, which
 * only that browser may complete and whose code is exchanged by a workflow.
 */
export function connectFlowRoutes(deps: ApiDeps, pages: PageLimits): Router {
  const router = Router();
  const workflows = connectionWorkflowsFor(deps);

  /** The end of a flow that connected: back to the customer's product, or the success page. */
  function connected(
    res: Response,
    link: ConnectLink,
    app: AppInfo | null,
    branding: ConnectBranding,
    connectionId: string,
  ): void {
    if (link.redirectUrl) {
      const target = new URL(link.redirectUrl);
      target.searchParams.set('status', 'connected');
      target.searchParams.set('connection_id', connectionId);
      target.searchParams.set('app', link.app);
      res.set('Cache-Control', 'no-store').redirect(303, target.href);
      return;
    }
    if (!app) throw new Error(`app ${link.app} was removed during a connect flow`);
    sendPage(res, 200, renderSuccessPage({ branding, app: { id: app.id, name: app.name } }));
  }

  // An app that takes a credential the user enters: its form, and the form's post.
  const credential = connectCredentialRoutes(deps, pages, connected);
  router.use(credential.router);

  // Before `/connect/:token`, which would otherwise take `callback` for a token.
  router.get(CONNECT_CALLBACK_PATH, async (req, res) => {
    const query = new URL(req.originalUrl, 'http://callback').searchParams;
    const state = query.get('state');
    const attempt = state ? await findAttemptByState(deps.sql, state) : null;
    const link = attempt ? await findLinkById(deps.sql, attempt.linkId) : null;
    if (await pages.refused(req, res, { token: state ?? '', usable: Boolean(attempt && link) })) {
      return;
    }
    if (!attempt || !link) {
      problemPage(res, 'invalid_state', DEFAULT_BRANDING);
      return;
    }
    const branding = await brandingOf(deps.sql, link.environmentId);
    const found = await linkApp(deps.sql, link.environmentId, link.app);
    const app = found && { id: found.id, name: found.name };
    if (attempt.consumedAt) {
      // A reload of the success page, in the browser that connected: it sees its success again.
      const connectionId = attempt.browserRef
        ? connectedThrough(req, deps.config, { id: attempt.id, browserRef: attempt.browserRef })
        : null;
      const connection = connectionId ? await findConnectionById(deps.sql, connectionId) : null;
      if (connection?.status === 'active') {
        connected(res, link, app, branding, connection.id);
        return;
      }
      problemPage(res, 'link_used', branding, app ?? undefined);
      return;
    }
    if (attempt.expiresAt < new Date()) {
      problemPage(res, 'attempt_expired', branding, app ?? undefined);
      return;
    }
    // Only the browser that started the attempt may finish it, deny it included: anyone else
    // holding the state (it is in the app's authorize URL) changes nothing.
    if (!attempt.browserRef || !isBoundTo(attempt, attemptCookieValue(req, attempt.browserRef))) {
      problemPage(res, 'browser_mismatch', branding, app ?? undefined);
      return;
    }
    // From here on the attempt gets spent, so its cookie has served its purpose.
    clearAttemptCookie(res, deps.config, attempt.browserRef);
    const error = query.get('error');
    if (error !== null || !query.get('code')) {
      // The attempt is spent, but not the link: the user may open it and try again.
      await consumeAttempt(deps.sql, attempt.id);
      // RFC 9207: an MCP app's error response from another issuer says nothing of its server's
      // answer (a code's issuer is checked before its exchange, exchange-mcp-code.ts).
      const mcp = await findAttemptAuthorization(deps.sql, attempt.id);
      const refusal = mcp && responseIssuerRefusal(mcp.responseIssuer, query);
      if (refusal) {
        req.log.warn(
          { app: link.app, attemptId: attempt.id, ...refusal },
          'MCP authorization response refused: iss (RFC 9207)',
        );
        problemPage(res, 'response_issuer_mismatch', branding, app ?? undefined);
        return;
      }
      problemPage(
        res,
        error === 'access_denied' ? 'access_denied' : 'authorization_failed',
        branding,
        app ?? undefined,
      );
      return;
    }
    if (!(await parkCallback(deps.sql, deps.config.encryption, attempt.id, query.toString()))) {
      problemPage(res, 'link_used', branding, app ?? undefined);
      return;
    }
    const outcome = await workflows.completeConnection(attempt.id);
    if (!outcome.ok) {
      problemPage(res, outcome.code, branding, app ?? undefined);
      return;
    }
    setConnectedCookie(
      res,
      deps.config,
      { id: attempt.id, browserRef: attempt.browserRef },
      outcome.connectionId,
    );
    connected(res, link, app, branding, outcome.connectionId);
  });

  router.get('/connect/:token', async (req, res) => {
    const found = await checkLink(deps.sql, req.params.token);
    if (await pages.refused(req, res, { token: req.params.token, usable: !('problem' in found) })) {
      return;
    }
    if ('problem' in found) {
      problemPage(res, found.problem, found.branding, found.app);
      return;
    }
    if (found.app.kind === 'credential') {
      credential.showForm(res, req.params.token, { ...found, app: found.app });
      return;
    }
    // An MCP app's scopes are known once its server is asked, at the start; an OpenAPI app's
    // are those its accepted operations name.
    const oauthApp =
      found.app.kind === 'openapi'
        ? await findOAuthApp(deps.sql, deps.config, found.link.environmentId, found.app.id)
        : null;
    sendPage(
      res,
      200,
      renderConnectPage({
        branding: found.branding,
        app: { id: found.app.id, name: found.app.name },
        startUrl: `${deps.config.api.publicUrl}/connect/${req.params.token}/start`,
        scopes:
          found.app.kind === 'catalog'
            ? requestedScopes(found.app.definition)
            : oauthApp && 'app' in oauthApp
              ? requestedScopes(oauthApp.app)
              : [],
      }),
    );
  });

  router.get('/connect/:token/start', async (req, res) => {
    const found = await checkLink(deps.sql, req.params.token);
    if (await pages.refused(req, res, { token: req.params.token, usable: !('problem' in found) })) {
      return;
    }
    if ('problem' in found) {
      problemPage(res, found.problem, found.branding, found.app);
      return;
    }
    const { link, app, branding } = found;
    if (app.kind === 'credential') {
      // No app to send the user to: the credential is entered on the link's own page.
      res.set('Cache-Control', 'no-store').redirect(303, connectUrl(deps.config, req.params.token));
      return;
    }
    if (app.kind === 'mcp') {
      // Discovery, the choice of client and any registration reach the app's servers: a workflow.
      const browser = newBrowserBinding();
      const started = await workflows.startMcpConnection({
        attemptId: uuidv7(),
        linkId: link.id,
        browser: { ref: browser.ref, secretSha256Hex: hashToken(browser.secret).toString('hex') },
      });
      if (!started.ok) {
        problemPage(res, started.code, branding, app);
        return;
      }
      setAttemptCookie(res, deps.config, browser);
      res.set('Cache-Control', 'no-store').redirect(302, started.authorizationUrl);
      return;
    }
    // A catalog app, or an OpenAPI app as its accepted document describes its flow now.
    const oauthApp = await findOAuthApp(deps.sql, deps.config, link.environmentId, app.id);
    const client =
      oauthApp && 'app' in oauthApp
        ? await chooseClientForNewConnection(deps.sql, deps.config, link.environmentId, app.id)
        : null;
    if (!oauthApp || !('app' in oauthApp) || !client) {
      if (oauthApp && 'refused' in oauthApp) {
        req.log.warn({ app: app.id, reason: oauthApp.refused }, 'app not connectable');
      }
      problemPage(res, 'app_not_configured', branding, app);
      return;
    }
    const browser = newBrowserBinding();
    const url = await startAuthorization(deps.sql, deps.config, {
      linkId: link.id,
      app: oauthApp.app,
      credentials: client.credentials,
      browser,
    });
    setAttemptCookie(res, deps.config, browser);
    res.set('Cache-Control', 'no-store').redirect(302, url.href);
  });

  // A person is looking at these pages: failures end on a branded page, not a JSON envelope.
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    // The router could not decode the token (not percent-encoded UTF-8): it names no link.
    if (err instanceof URIError) {
      problemPage(res, 'link_invalid', DEFAULT_BRANDING);
      return;
    }
    req.log.error({ err }, 'connect flow failed');
    problemPage(res, 'internal_error', DEFAULT_BRANDING);
  };
  router.use(onError);
  return router;
}
