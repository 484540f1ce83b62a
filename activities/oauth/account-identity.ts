import { deadlineSignal, type DeadlineSignal } from '../../infra/deadline-signal.js';
import type { AppDefinition, UpstreamRequest } from '../../workflows/catalog/index.js';
import type { JsonPath } from '../../workflows/catalog/types.js';
import type { oauth } from './client.js';

type TokenResponse = oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers;

/** What learning the account reads of an app (a catalog app, or an OpenAPI app with none). */
type IdentifiedApp = Pick<AppDefinition, 'id' | 'accountIdentity' | 'apiHeaders'>;

/** The app declares how to learn the account, but this answer did not tell it. */
export class AccountUnverified extends Error {
  override name = 'AccountUnverified';
}

/** The identity request is a single GET or POST; an app slower than this fails the connect. */
const REQUEST_TIMEOUT_MS = 10_000;

function valueAt(document: unknown, path: JsonPath): unknown {
  let value = document;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The identity made of the values at `fields` in `document`: one value as a string, several as
 * a JSON array (so no two different tuples read the same). Undefined when any is missing, empty
 * or not a string or a number: an account we cannot name is never matched by accident.
 */
export function identityAt(document: unknown, fields: readonly JsonPath[]): string | undefined {
  const values: string[] = [];
  for (const path of fields) {
    const value = valueAt(document, path);
    if (typeof value === 'number' && Number.isFinite(value)) values.push(String(value));
    else if (typeof value === 'string' && value !== '') values.push(value);
    else return undefined;
  }
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : JSON.stringify(values);
}

/** The app's API answer to `app.accountIdentity.request`, made with the new access token. */
async function askTheApp(
  app: IdentifiedApp,
  request: UpstreamRequest,
  apiBaseUrl: string,
  accessToken: string,
): Promise<unknown> {
  // The wait covers the answer's body too.
  const deadline = deadlineSignal(REQUEST_TIMEOUT_MS);
  try {
    return await askWithin(deadline, app, request, apiBaseUrl, accessToken);
  } finally {
    deadline.clear();
  }
}

async function askWithin(
  deadline: DeadlineSignal,
  app: IdentifiedApp,
  request: UpstreamRequest,
  apiBaseUrl: string,
  accessToken: string,
): Promise<unknown> {
  const url = new URL(`${apiBaseUrl}${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.append(name, String(value));
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers: {
        accept: 'application/json',
        ...app.apiHeaders,
        ...request.headers,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        authorization: `Bearer ${accessToken}`,
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      // A redirect would carry the token to wherever the app points: not followed.
      redirect: 'error',
      signal: deadline.signal,
    });
  } catch (error) {
    throw new AccountUnverified(
      `${app.id} could not be asked for the account (${error instanceof Error ? error.message : 'unknown'})`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new AccountUnverified(
      `${app.id} answered ${String(response.status)} to the account request`,
    );
  }
  try {
    return await response.json();
  } catch {
    throw new AccountUnverified(`${app.id} answered the account request with no JSON`);
  }
}

/**
 * The app's stable id of the account a token response was issued for, as the catalog says to
 * learn it; null when the catalog does not say (the account is then unknown). Throws
 * AccountUnverified when it says but the app does not tell.
 */
export async function learnAccountId(
  app: IdentifiedApp,
  response: TokenResponse,
  apiBaseUrl: string,
): Promise<string | null> {
  const identity = app.accountIdentity;
  if (!identity) return null;
  let found: string | undefined;
  switch (identity.from) {
    case 'id_token':
      found = identityAt(response.claims(), [['sub']]);
      break;
    case 'token_response':
      found = identityAt(response, identity.fields);
      break;
    case 'api':
      found = identityAt(
        await askTheApp(app, identity.request, apiBaseUrl, response.access_token),
        identity.fields,
      );
      break;
  }
  if (found === undefined) throw new AccountUnverified(`${app.id} did not name the account`);
  return found;
}
