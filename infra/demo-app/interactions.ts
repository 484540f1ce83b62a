import express, { type Request, type Response, type Router } from 'express';
import type { Interaction, Provider } from 'oidc-provider';
import { escapeHtml, page } from './html.js';
import { SUPPORTED_SCOPES } from './provider.js';

const USERNAME = /^[A-Za-z0-9._-]{1,64}$/;

const SCOPE_DESCRIPTIONS: Record<string, string> = {
  'tasks:read': 'Read your tasks',
  'tasks:write': 'Create, change and delete your tasks',
  offline_access: 'Keep access while you are not using the app',
  openid: 'Know who you are',
};

/**
 * The login + consent page. One form does both: a username (no password, it is a demo) and an
 * Allow / Deny decision, so a person or a test using plain HTTP can complete it without JavaScript.
 */
export function interactionRouter(provider: Provider): Router {
  const router = express.Router();

  router.get('/interaction/:uid', async (req, res) => {
    const interaction = await details(provider, req, res);
    if (interaction) res.type('html').send(renderForm(interaction));
  });

  router.post(
    '/interaction/:uid',
    express.urlencoded({ extended: false, limit: '8kb' }),
    async (req: Request<{ uid: string }, unknown, Record<string, unknown>>, res) => {
      const interaction = await details(provider, req, res);
      if (!interaction) return;
      if (req.body['decision'] === 'deny') {
        await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'The user denied the request.' },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const loggingIn = interaction.prompt.name === 'login';
      const username = loggingIn ? req.body['username'] : interaction.session?.accountId;
      if (typeof username !== 'string' || !USERNAME.test(username)) {
        const error = 'Enter a username of letters, digits, ".", "_" or "-".';
        res.status(422).type('html').send(renderForm(interaction, error));
        return;
      }
      const grantId = await grantRequestedScopes(provider, interaction, username);
      await provider.interactionFinished(
        req,
        res,
        { ...(loggingIn ? { login: { accountId: username } } : {}), consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
    },
  );

  return router;
}

/** The interaction bound to the request's cookie, or undefined after answering with an error page. */
async function details(
  provider: Provider,
  req: Request<{ uid: string }>,
  res: Response,
): Promise<Interaction | undefined> {
  try {
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid === req.params.uid) return interaction;
  } catch {
    // Falls through: an expired or missing interaction cookie is a user-facing error, not a bug.
  }
  res
    .status(400)
    .type('html')
    .send(
      page(
        'Sign-in expired',
        '<h2>This sign-in request has expired</h2><p>Go back to the app and connect again.</p>',
      ),
    );
  return undefined;
}

async function grantRequestedScopes(
  provider: Provider,
  interaction: Interaction,
  accountId: string,
): Promise<string> {
  const clientId = String(interaction.params['client_id']);
  const existing = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
  // A grant of the session's previous user must not be reused when someone else signs in.
  const grant =
    existing?.accountId === accountId ? existing : new provider.Grant({ accountId, clientId });
  const scopes = requestedScopes(interaction);
  if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
  return grant.save();
}

function requestedScopes(interaction: Interaction): string[] {
  const scope = interaction.params['scope'];
  const requested = typeof scope === 'string' ? scope.split(' ') : [];
  return SUPPORTED_SCOPES.filter((s) => requested.includes(s));
}

function renderForm(interaction: Interaction, error?: string): string {
  const clientId = escapeHtml(String(interaction.params['client_id']));
  const scopes = requestedScopes(interaction)
    .map((s) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[s] ?? s)} <code>${escapeHtml(s)}</code></li>`)
    .join('');
  const signedInAs = interaction.session?.accountId;
  const identity =
    interaction.prompt.name === 'login' || signedInAs === undefined
      ? `<label for="username">Username</label>
<input id="username" name="username" value="alice" required autocomplete="username"
  pattern="[A-Za-z0-9._\\-]{1,64}" aria-describedby="username-hint">
<p id="username-hint"><small>Any name works; each name has its own tasks.</small></p>`
      : `<p>Signed in as <strong>${escapeHtml(signedInAs)}</strong>.</p>`;
  return page(
    'Authorize',
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p><strong>${clientId}</strong> wants to access your Acme Tasks account:</p>
<ul>${scopes || '<li>No specific permissions</li>'}</ul>
<form method="post" action="/interaction/${escapeHtml(interaction.uid)}">
${identity}
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`,
  );
}
