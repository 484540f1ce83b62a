import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import type { Interaction, Provider } from 'oidc-provider';
import { z } from 'zod';
import { escapeHtml } from '../demo-app/html.js';
import { accountByEmail, DEV_PASSWORD, type DevAccount } from './accounts.js';

export const PROVIDER_NAME = 'Gatehouse dev sign-in';

const signInSchema = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(200),
});

/**
 * The provider's one interaction, the sign-in: a plain form (email and password, no script), so
 * a person or a test over plain HTTP completes it alike. There is no consent page: the grant is
 * made by `loadExistingGrant` (provider.ts).
 */
export function signInRouter(provider: Provider, accounts: readonly DevAccount[]): Router {
  const router = express.Router();

  router.get('/interaction/:uid', async (req, res) => {
    const interaction = await details(provider, req, res);
    if (!interaction) return;
    if (interaction.prompt.name === 'login') {
      res.type('html').send(signInForm(interaction, accounts));
      return;
    }
    // Only a request that insists on a consent prompt gets here: its grant is already made
    // (without one, finishing would only bring the same prompt back).
    if (!interaction.grantId) {
      res.status(400).type('html').send(errorPage('consent_required', 'No grant to confirm.'));
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { consent: { grantId: interaction.grantId } },
      { mergeWithLastSubmission: true },
    );
  });

  router.post(
    '/interaction/:uid',
    express.urlencoded({ extended: false, limit: '8kb' }),
    async (req: Request<{ uid: string }, unknown, unknown>, res) => {
      const interaction = await details(provider, req, res);
      if (!interaction) return;
      const form = signInSchema.safeParse(req.body);
      if (!form.success) {
        res
          .status(422)
          .type('html')
          .send(signInForm(interaction, accounts, 'Enter an email and a password.'));
        return;
      }
      const account = accountByEmail(accounts, form.data.email);
      if (!account || !samePassword(form.data.password)) {
        res
          .status(401)
          .type('html')
          .send(signInForm(interaction, accounts, 'Wrong email or password.', form.data.email));
        return;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      );
    },
  );

  return router;
}

/** Compared in constant time all the same: the habit costs nothing, even for a known password. */
function samePassword(given: string): boolean {
  const expected = Buffer.from(DEV_PASSWORD);
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The interaction bound to the request's cookie, or undefined after answering with an error page. */
async function details(
  provider: Provider,
  req: Request<{ uid: string }, unknown, unknown>,
  res: Response,
): Promise<Interaction | undefined> {
  try {
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid === req.params.uid) return interaction;
  } catch {
    // Falls through: an expired or missing interaction cookie is the person's to retry, not a bug.
  }
  res
    .status(400)
    .type('html')
    .send(
      page(
        'Sign-in expired',
        '<h2>This sign-in has expired</h2><p>Go back to Gatehouse and sign in again.</p>',
      ),
    );
  return undefined;
}

function signInForm(
  interaction: Interaction,
  accounts: readonly DevAccount[],
  error?: string,
  email = '',
): string {
  const clientId = escapeHtml(String(interaction.params['client_id']));
  const rows = accounts
    .map(
      (account) =>
        `<tr><td>${escapeHtml(account.email)}</td><td>${escapeHtml(account.name)}</td>` +
        `<td>${account.groups.length ? escapeHtml(account.groups.join(', ')) : '<em>none</em>'}</td></tr>`,
    )
    .join('\n');
  return page(
    'Sign in',
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p>Sign in to <strong>${clientId}</strong>.</p>
<form method="post" action="/interaction/${escapeHtml(interaction.uid)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" value="${escapeHtml(email)}" required autocomplete="username">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password"
  aria-describedby="password-hint">
<p id="password-hint" class="hint">This is a development provider: every account's password is
<code>${escapeHtml(DEV_PASSWORD)}</code>. Never use it outside development and tests.</p>
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<h2>Accounts</h2>
<table>
<thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Groups</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`,
  );
}

export function errorPage(error: string, description: string): string {
  return page(
    'Something went wrong',
    `<h2>Something went wrong</h2>
<p><strong>${escapeHtml(error)}</strong></p>
<p>${escapeHtml(description)}</p>`,
  );
}

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2328; margin: 0; }
  main { max-width: 32rem; margin: 3rem auto; background: #fff; padding: 1.5rem 2rem;
         border-radius: 8px; box-shadow: 0 1px 3px rgb(0 0 0 / 0.15); }
  h1 { font-size: 1.5rem; margin: 0 0 1rem; }
  h2 { font-size: 1.1rem; margin-top: 1.5rem; }
  label { display: block; font-weight: 600; margin: 1rem 0 0.25rem; }
  input { width: 100%; box-sizing: border-box; padding: 0.5rem; font-size: 1rem; }
  .hint { color: #59636e; font-size: 0.9rem; }
  .actions { margin-top: 1.25rem; }
  button { width: 100%; padding: 0.6rem; font-size: 1rem; border-radius: 6px; cursor: pointer;
           border: 1px solid #1f6feb; background: #1f6feb; color: #fff; }
  button:focus-visible, input:focus-visible { outline: 3px solid #0969da; outline-offset: 2px; }
  table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
  th, td { text-align: left; padding: 0.3rem 0.5rem 0.3rem 0; border-bottom: 1px solid #d1d9e0; }
  .error { color: #b3261e; }
`;

/** A complete, script-free HTML page under the provider's name. */
function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${PROVIDER_NAME}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${PROVIDER_NAME}</h1>
${body}
</main>
</body>
</html>`;
}
