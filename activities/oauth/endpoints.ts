import type { Config } from '../../infra/config.js';
import type { AppDefinition } from '../../workflows/catalog/index.js';

export interface AppEndpoints {
  /** The authorization server's issuer identifier (its base URL). */
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  apiBaseUrl: string;
}

const trim = (url: string) => url.replace(/\/+$/, '');

function join(base: string, path: string): string {
  return /^https?:\/\//.test(path) ? path : `${base}${path}`;
}

/** Where an app's endpoints are in this deployment: the catalog's defaults, or APP_URLS. */
export function appEndpoints(app: AppDefinition, urls: Config['apps']['urls']): AppEndpoints {
  const override = urls[app.id];
  const oauthBase = trim(override?.oauth ?? app.oauthBaseUrl);
  return {
    issuer: oauthBase,
    authorizationUrl: join(oauthBase, app.oauth.authorizationPath),
    tokenUrl: join(oauthBase, app.oauth.tokenPath),
    revocationUrl: app.oauth.revocationPath ? join(oauthBase, app.oauth.revocationPath) : null,
    apiBaseUrl: trim(override?.api ?? app.apiBaseUrl),
  };
}
