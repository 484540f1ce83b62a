import { randomBytes, timingSafeEqual } from 'node:crypto';
import express, { Router, type Response } from 'express';
import * as oidc from 'openid-client';
import {
  createConsoleSession,
  deleteOldSessions,
  endConsoleSession,
} from '../../activities/db/console-sessions.js';
import {
  findEnvironmentById,
  findEnvironmentByName,
  listEnvironments,
  ENVIRONMENT_NAME,
  type Environment,
} from '../../activities/db/environments.js';
import { upsertPerson } from '../../activities/db/people.js';
import { rolesOfGroups } from '../../activities/db/role-mappings.js';
import {
  SIGN_IN_TTL_SECONDS,
  createSignInAttempt,
  takeSignInAttempt,
} from '../../activities/db/sign-in-attempts.js';
import type { ApiDeps } from '../deps.js';
import { html } from '../connect/pages/html.js';
import { resolveBranding } from '../connect/pages/theme.js';
import { DEFAULT_BRANDING } from '../connect/pages/types.js';
import { renderConsolePage, renderNotice } from '../console/pages/layout.js';
import { consoleErrors } from '../console/console-errors.js';
import { sendConsolePage } from '../console/respond.js';
import type { PageLimits } from '../http/rate-limit.js';
import { consoleFormTokenMatches } from '../people/form-token.js';
import { consoleViewer } from '../people/console-viewer.js';
import { identityProviderOf } from '../people/identity-provider.js';
import { readSignInClaims } from '../people/sign-in-claims.js';
import { roleGroupsOf } from '../people/role-groups.js';
import {
  clearSessionCookie,
  consoleCookieOptions,
  readCookie,
  setSessionCookie,
  signInCookieName,
  signedOutCookieName,
} from '../people/session-cookie.js';
import { crossSite } from '../people/same-origin.js';

const branding = resolveBranding(DEFAULT_BRANDING);

const CALLBACK_PATH = '/console/callback';

/**
 * Sign-in for people (OpenID Connect, authorization code with PKCE), sign-out, and the console's
 * front door. A sign-in is bound to the browser that started it (a cookie holding its state), so
 * a callback URL sent to someone else signs nobody in; its verifier and nonce wait sealed in
 * Postgres. A person whose groups hold no role in the environment is told so and gets no session.
 */
export function consoleSignInRoutes(deps: ApiDeps, pages: PageLimits): Router {
  const router = Router();
  const { config, sql } = deps;
  const settings = config.people.oidc;
  const provider = settings
    ? identityProviderOf(settings, (err: unknown) => {
        deps.logger.warn({ err }, 'the identity provider’s discovery failed');
      })
    : null;
  const publicUrl = config.api.publicUrl;
  const consoleBase = (environment: string) => `${publicUrl}/console/${environment}`;

  const notConfigured = (res: Response) => {
    sendConsolePage(
      res,
      404,
      renderNotice({
        branding,
        title: 'Sign-in is not set up',
        message:
          'This Gatehouse has no identity provider configured (OIDC_ISSUER_URL, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET), so nobody signs in to its console. Approvers can still decide through decision links.',
      }),
    );
  };

  const unknownEnvironment = (res: Response) => {
    sendConsolePage(
      res,
      404,
      renderNotice({
        branding,
        title: 'No such environment',
        message: 'There is no environment by that name here.',
        action: { href: `${publicUrl}/console`, label: 'Choose an environment' },
      }),
    );
  };

  async function environmentNamed(name: string): Promise<Environment | null> {
    return ENVIRONMENT_NAME.test(name) ? findEnvironmentByName(sql, name) : null;
  }

  // The front door: straight into the only environment, or a choice between them.
  router.get('/console', async (_req, res) => {
    if (!provider) {
      notConfigured(res);
      return;
    }
    const environments = await listEnvironments(sql);
    if (environments.length === 1 && environments[0]) {
      res.redirect(303, `${consoleBase(environments[0].name)}/inbox`);
      return;
    }
    sendConsolePage(
      res,
      200,
      renderConsolePage({
        branding,
        title: 'Choose an environment',
        body: html`<div class="panel">
          <h1>Choose an environment</h1>
          <p class="lead">You sign in to one environment at a time.</p>
          <ul>
            ${environments.map(
              (environment) =>
                html`<li>
                  <a href="${consoleBase(environment.name)}/inbox">${environment.name}</a>
                </li>`,
            )}
          </ul>
        </div>`,
      }),
    );
  });

  router.get('/console/:environment/sign-in', async (req, res) => {
    if (!provider) {
      notConfigured(res);
      return;
    }
    if (await pages.refused(req, res, { token: 'sign-in', usable: false })) return;
    const environment = await environmentNamed(req.params.environment);
    if (!environment) {
      unknownEnvironment(res);
      return;
    }
    const configuration = await provider.configuration();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await createSignInAttempt(sql, config.encryption, state, {
      environmentId: environment.id,
      returnTo: returnPath(req.query.return_to, environment.name),
      codeVerifier,
      nonce,
    });
    res.cookie(signInCookieName(config), state, {
      ...consoleCookieOptions(config),
      maxAge: SIGN_IN_TTL_SECONDS * 1000,
    });
    const signedOut = readCookie(req, signedOutCookieName(config)) !== undefined;
    if (signedOut) res.clearCookie(signedOutCookieName(config), consoleCookieOptions(config));
    const url = oidc.buildAuthorizationUrl(configuration, {
      ...(signedOut ? { prompt: 'login' } : {}),
      redirect_uri: `${publicUrl}${CALLBACK_PATH}`,
      scope: provider.settings.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    res.redirect(303, url.href);
  });

  router.get(CALLBACK_PATH, async (req, res) => {
    if (!provider) {
      notConfigured(res);
      return;
    }
    if (await pages.refused(req, res, { token: 'sign-in', usable: false })) return;
    const refuse = (status: number, title: string, message: string, retry?: string) => {
      sendConsolePage(
        res,
        status,
        renderNotice({
          branding,
          title,
          message,
          ...(retry ? { action: { href: retry, label: 'Sign in again' } } : {}),
        }),
      );
    };
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const bound = readCookie(req, signInCookieName(config));
    res.clearCookie(signInCookieName(config), consoleCookieOptions(config));
    if (!state || bound === undefined || !sameText(state, bound)) {
      req.log.warn('sign-in callback without this browser’s sign-in');
      refuse(
        400,
        'This sign-in did not start here',
        'The answer from the identity provider does not belong to a sign-in this browser started (or it took longer than ten minutes). Start again from the console.',
        `${publicUrl}/console`,
      );
      return;
    }
    const attempt = await takeSignInAttempt(sql, config.encryption, state);
    const environment = attempt ? await findEnvironmentById(sql, attempt.environmentId) : null;
    if (!attempt || !environment) {
      refuse(
        400,
        'This sign-in has expired',
        'A sign-in has ten minutes to come back, and each can be used once. Start again from the console.',
        `${publicUrl}/console`,
      );
      return;
    }
    const retry = `${consoleBase(environment.name)}/sign-in`;
    if (typeof req.query.error === 'string') {
      req.log.info({ error: req.query.error }, 'identity provider refused the sign-in');
      refuse(
        403,
        'The identity provider did not sign you in',
        `It answered “${req.query.error.slice(0, 100)}”.`,
        retry,
      );
      return;
    }
    const configuration = await provider.configuration();
    let claims: Record<string, unknown>;
    try {
      const query = req.originalUrl.slice(req.originalUrl.indexOf('?'));
      const tokens = await oidc.authorizationCodeGrant(
        configuration,
        new URL(`${publicUrl}${CALLBACK_PATH}${query}`),
        {
          pkceCodeVerifier: attempt.codeVerifier,
          expectedState: state,
          expectedNonce: attempt.nonce,
          idTokenExpected: true,
        },
      );
      claims = tokens.claims() ?? {};
    } catch (error) {
      req.log.warn({ err: error }, 'sign-in code exchange failed');
      refuse(
        502,
        'Sign-in could not be completed',
        'The identity provider’s answer could not be checked. Try again; if it keeps happening, tell an administrator.',
        retry,
      );
      return;
    }
    const reading = readSignInClaims(claims, provider.settings);
    if (!reading.ok) {
      const why = {
        email_missing: 'The identity provider did not say who you are by e-mail.',
        email_unverified: 'The identity provider says your e-mail address is not verified.',
        email_domain: 'Your e-mail address is not in a domain allowed to sign in here.',
      }[reading.reason];
      req.log.info({ reason: reading.reason }, 'sign-in refused');
      refuse(403, 'You cannot sign in here', why);
      return;
    }
    const person = await upsertPerson(sql, reading.claims);
    const roles = await rolesOfGroups(sql, environment.id, roleGroupsOf(person));
    if (roles.length === 0) {
      req.log.info(
        { personId: person.id, environment: environment.name },
        'sign-in without a role',
      );
      refuse(
        403,
        'You have no role in this environment',
        `You are ${person.email}, in ${person.groups.length > 0 ? `the groups ${person.groups.join(', ')}` : 'no groups'}; neither they nor you are given a role in “${environment.name}”. An administrator maps groups (or you, as person:${person.email}) to roles.`,
      );
      return;
    }
    const token = randomBytes(32).toString('base64url');
    await createConsoleSession(sql, {
      token,
      environmentId: environment.id,
      personId: person.id,
      groups: person.groups,
      roles,
      csrfSecret: randomBytes(32),
      absoluteSeconds: config.people.session.absoluteSeconds,
    });
    // Sessions long over go with whichever sign-in comes next (expires_at is indexed).
    await deleteOldSessions(sql);
    req.log.info({ personId: person.id, environment: environment.name, roles }, 'signed in');
    setSessionCookie(res, config, environment.name, token);
    res.redirect(303, `${publicUrl}${attempt.returnTo}`);
  });

  router.post(
    '/console/:environment/sign-out',
    express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 }),
    async (req, res) => {
      const environment = await environmentNamed(req.params.environment);
      if (!environment) {
        unknownEnvironment(res);
        return;
      }
      const viewer = await consoleViewer(sql, config, req, environment);
      if (viewer) {
        const form = (req.body ?? {}) as Record<string, unknown>;
        if (crossSite(req, publicUrl) || !consoleFormTokenMatches(viewer.session, form.csrf)) {
          sendConsolePage(
            res,
            403,
            renderNotice({
              branding,
              title: 'That form was not sent from this console',
              message: 'Nothing was changed. Sign out from the console’s own button.',
            }),
          );
          return;
        }
        await endConsoleSession(sql, viewer.session.id);
        req.log.info({ personId: viewer.session.personId }, 'signed out');
      }
      clearSessionCookie(res, config, environment.name);
      res.cookie(signedOutCookieName(config), '1', {
        ...consoleCookieOptions(config),
        maxAge: 24 * 3600 * 1000,
      });
      sendConsolePage(
        res,
        200,
        renderNotice({
          branding,
          title: 'You are signed out',
          message:
            'Your session has ended. The next sign-in from this browser asks the identity provider for your password again.',
          action: { href: `${consoleBase(environment.name)}/sign-in`, label: 'Sign in again' },
        }),
      );
    },
  );

  router.use('/console', consoleErrors);
  return router;
}

/** Where to land after sign-in: a console path of this environment, or its inbox. */
export function returnPath(given: unknown, environment: string): string {
  const home = `/console/${environment}/inbox`;
  if (typeof given !== 'string' || given.length > 500) return home;
  // A path of this environment's console only: never another origin (`//evil`, `/\\evil`).
  return given.startsWith(`/console/${environment}/`) && !/[\\\s]|\/\//.test(given) ? given : home;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
