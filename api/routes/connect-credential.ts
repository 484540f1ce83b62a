import express, { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import { secretFromForm, type SecretProblem } from '../../activities/credentials/schemes.js';
import { storeEnteredCredential } from '../../activities/credentials/store-credential.js';
import type { ConnectLink } from '../../activities/db/connect-links.js';
import type { ApiDeps } from '../deps.js';
import {
  attemptCookieValue,
  clearAttemptCookie,
  newBrowserBinding,
  setAttemptCookie,
} from '../connect/attempt-cookie.js';
import {
  checkCredentialForm,
  credentialFormFields,
  type CredentialFormFields,
} from '../connect/credential-form.js';
import type { LinkApp } from '../connect/link-app.js';
import { checkLink } from '../connect/link-check.js';
import {
  CREDENTIAL_REFERRER_POLICY,
  credentialLabel,
  renderCredentialPage,
} from '../connect/pages/credential.js';
import type { ConnectBranding } from '../connect/pages/index.js';
import { problemPage, sendPage } from '../connect/respond.js';
import type { PageLimits } from '../http/rate-limit.js';

type CredentialLinkApp = Extract<LinkApp, { kind: 'credential' }>;

/** A usable link of an app that takes a credential, as `checkLink` found it. */
export interface CredentialLink {
  link: ConnectLink;
  app: CredentialLinkApp;
  branding: ConnectBranding;
}

export const credentialFormPath = (token: string) => `/connect/${token}/credential`;

// The secret is at most 4 KiB (schemes.ts); the rest of the form is a few short fields. A larger
// body is read as a secret too long, not as a failure of the server.
const readFormBody = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 });

type Form = Record<string, unknown>;

/** What the form parser's error says: a body past the limit, one that is no form, or worse. */
function formError(error: unknown): 'too_large' | 'unreadable' | null {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large' || type === 'parameters.too.many') return 'too_large';
  if (type === 'entity.parse.failed' || type === 'encoding.unsupported') return 'unreadable';
  return null;
}

/**
 * The hosted page of a connect link whose app takes a credential (an API key, a bearer token, a
 * username and password): the form, bound to this browser (credential-form.ts), and its post,
 * which stores the credential sealed and ends like an OAuth connect (the link's `redirect_url`
 * with `status=connected`, or the success page). `connected` is that end, shared with the OAuth
 * callback.
 */
export function connectCredentialRoutes(
  deps: ApiDeps,
  pages: PageLimits,
  connected: (
    res: Response,
    link: ConnectLink,
    app: LinkApp,
    branding: ConnectBranding,
    connectionId: string,
  ) => void,
): { router: Router; showForm: (res: Response, token: string, found: CredentialLink) => void } {
  const router = Router();
  const publicOrigin = new URL(deps.config.api.publicUrl).origin;

  function render(
    res: Response,
    status: number,
    token: string,
    found: CredentialLink,
    fields: CredentialFormFields,
    problem: SecretProblem | null,
  ): void {
    sendPage(
      res,
      status,
      renderCredentialPage({
        branding: found.branding,
        app: { id: found.app.id, name: found.app.name },
        scheme: found.app.declaration.scheme,
        hint: found.app.declaration.hint,
        formAction: `${deps.config.api.publicUrl}${credentialFormPath(token)}`,
        fields,
        problem,
      }),
      CREDENTIAL_REFERRER_POLICY,
    );
  }

  /** A fresh form: a new attempt cookie for this browser, and the fields bound to it. */
  function showForm(
    res: Response,
    token: string,
    found: CredentialLink,
    status = 200,
    problem: SecretProblem | null = null,
  ): void {
    const binding = newBrowserBinding();
    setAttemptCookie(res, deps.config, binding);
    render(
      res,
      status,
      token,
      found,
      credentialFormFields(deps.config.encryption, token, binding),
      problem,
    );
  }

  /** As the approval page: a browser that says where the form came from must say this origin. */
  function crossSite(req: Request): boolean {
    const origin = req.get('origin');
    if (origin !== undefined && origin !== publicOrigin) return true;
    const site = req.get('sec-fetch-site');
    return site !== undefined && site !== 'same-origin';
  }

  /** The post, its form read (`too_large`: past the parser's limit, nothing of it read). */
  async function posted(req: Request, res: Response, form: Form | 'too_large'): Promise<void> {
    const token = String(req.params.token);
    const found = await checkLink(deps.sql, token);
    if (await pages.refused(req, res, { token, usable: !('problem' in found) })) return;
    if ('problem' in found) {
      problemPage(res, found.problem, found.branding, found.app);
      return;
    }
    const { link, app, branding } = found;
    if (app.kind !== 'credential') {
      // The app behind the link no longer takes a credential: its page says what to do now.
      problemPage(res, 'form_invalid', branding, app);
      return;
    }
    const credentialLink = { link, app, branding };
    if (crossSite(req)) {
      req.log.warn({ app: app.id, linkId: link.id }, 'cross-site credential form refused');
      problemPage(res, 'form_invalid', branding, app);
      return;
    }
    if (form === 'too_large') {
      // Nothing of it was read, the form's binding neither: a fresh form says what went wrong.
      showForm(res, token, credentialLink, 400, {
        field: app.declaration.scheme.scheme === 'basic' ? 'password' : 'secret',
        message: `What was sent is far too long for a ${credentialLabel(app.declaration.scheme)}. Check what you pasted.`,
      });
      return;
    }
    const attempt = typeof form.attempt === 'string' ? form.attempt : '';
    const check = checkCredentialForm(
      deps.config.encryption,
      token,
      form,
      attempt === '' ? undefined : attemptCookieValue(req, attempt),
    );
    if (check !== 'ok') {
      req.log.warn({ app: app.id, linkId: link.id, check }, 'credential form refused');
      problemPage(res, check, branding, app);
      return;
    }
    const entered = secretFromForm(app.declaration.scheme, form);
    if ('problem' in entered) {
      // The same form again (its binding holds): the message, and empty fields to type anew.
      render(
        res,
        400,
        token,
        credentialLink,
        { attempt, issued: String(form.issued), csrf: String(form.csrf) },
        entered.problem,
      );
      return;
    }
    const stored = await storeEnteredCredential(
      deps.sql,
      deps.config.encryption,
      link,
      app.declaration.scheme,
      entered.secret,
    );
    clearAttemptCookie(res, deps.config, attempt);
    if (!stored.ok) {
      problemPage(res, stored.code, branding, app);
      return;
    }
    req.log.info(
      {
        app: app.id,
        linkId: link.id,
        connectionId: stored.connection.id,
        scheme: app.declaration.scheme.scheme,
        replaced: stored.replaced,
      },
      'credential connection stored',
    );
    connected(res, link, app, branding, stored.connection.id);
  }

  // The parser's refusals: a body past its limit is a secret too long, not a server failure; one
  // that is no form is an empty form, which its missing token then refuses. In the same route, as
  // a route passes its own errors only to its own error handlers.
  const onFormError: ErrorRequestHandler = (error: unknown, req, res, next) => {
    const kind = formError(error);
    if (kind === null) {
      next(error);
      return;
    }
    posted(req, res, kind === 'too_large' ? 'too_large' : {}).catch(next);
  };
  router.post(
    '/connect/:token/credential',
    readFormBody,
    async (req: Request, res: Response) => {
      await posted(req, res, req.is('application/x-www-form-urlencoded') ? (req.body as Form) : {});
    },
    onFormError,
  );

  return {
    router,
    showForm: (res, token, found) => {
      showForm(res, token, found);
    },
  };
}
