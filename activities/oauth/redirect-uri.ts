import type { Config } from '../../infra/config.js';

export const CONNECT_CALLBACK_PATH = '/connect/callback';

/**
 * The redirect URI the connect flow sends to every app (authorize request and code exchange), so
 * the one an operator registers with each app's OAuth client. It is the same for every app: the
 * callback finds its attempt by `state`, not by the path. Behind a proxy or on another host it
 * follows PUBLIC_URL, which is why it is shown from configuration rather than written down.
 */
export function connectRedirectUri(api: Pick<Config['api'], 'publicUrl'>): string {
  return `${api.publicUrl}${CONNECT_CALLBACK_PATH}`;
}
