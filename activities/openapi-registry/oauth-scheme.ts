/**
 * What connecting an OpenAPI app through OAuth 2.0 needs, read from its accepted snapshot only:
 * the authorization-code flow of the scheme its users connect with (connection-scheme.ts) and the
 * scopes to ask for. A refreshed document that moves the token URL changes nothing until an
 * operator accepts it, as for the base URL. activities/oauth/oauth-app.ts turns this into the
 * endpoints and settings the connect flow, the code exchange and refreshes use.
 */
import type { Db } from '../../infra/database/client.js';
import type { AuthScheme } from '../openapi-apps/index.js';
import type { SecurityAlternative } from '../openapi-apps/descriptors.js';
import { serverUrlProblem } from '../mcp-apps/server-url.js';
import { connectionOf, type SchemeSource } from './connection-scheme.js';

export type OAuthFlow = Extract<AuthScheme, { kind: 'oauth2' }>;

export interface OpenApiOAuthScheme {
  environmentId: string;
  appId: string;
  /** The app's name, for the connect pages. */
  name: string;
  /** The pinned base URL of its operations. */
  baseUrl: string;
  schemeName: string;
  flow: OAuthFlow;
  /** What the connect flow asks for (`scopesToRequest`). */
  scopes: string[];
}

export type OpenApiOAuthLookup =
  | { kind: 'oauth2'; scheme: OpenApiOAuthScheme }
  /** An OpenAPI app of the environment whose users connect otherwise (or not at all): why. */
  | { kind: 'other'; reason: string }
  /** No OpenAPI app of that id in the environment. */
  | null;

interface Row {
  name: string;
  baseUrl: string;
  authScheme: string | null;
  acceptedVersion: number | null;
  auth: SchemeSource['import']['auth'] | null;
  descriptors: { security: SecurityAlternative[] }[] | null;
}

/**
 * The scopes to ask for: those the accepted operations served by the connection name for its
 * scheme, deduplicated and sorted. Only what some operation needs, not every scope the scheme
 * lists: the user grants what the app's governed operations use, and no more.
 */
export function scopesToRequest(source: SchemeSource, schemeName: string): string[] {
  const scopes = new Set<string>();
  for (const descriptor of source.descriptors) {
    for (const alternative of descriptor.security) {
      const [only] = alternative.schemes;
      if (alternative.schemes.length !== 1 || only?.scheme !== schemeName) continue;
      for (const scope of only.scopes) scopes.add(scope);
    }
  }
  return [...scopes].sort();
}

/**
 * How the app's users connect, when it is an OpenAPI app of the environment. Reads the accepted
 * snapshot's schemes and each operation's security requirements only, in one statement: a large
 * document's descriptors are not read whole for every refresh.
 */
export async function findOpenApiOAuthScheme(
  sql: Db,
  environmentId: string,
  appId: string,
): Promise<OpenApiOAuthLookup> {
  const [row]: [Row?] = await sql`
    select a.name, a.base_url, a.auth_scheme, a.accepted_version, s.import -> 'auth' as auth,
      (select coalesce(jsonb_agg(jsonb_build_object('security', d -> 'security')), '[]'::jsonb)
         from jsonb_array_elements(s.descriptors) d) as descriptors
    from openapi_apps a
    left join openapi_app_snapshots s
      on s.environment_id = a.environment_id and s.app_id = a.id and s.version = a.accepted_version
    where a.environment_id = ${environmentId} and a.id = ${appId}`;
  if (!row) return null;
  const source: SchemeSource | null =
    row.acceptedVersion === null
      ? null
      : { descriptors: row.descriptors ?? [], import: { auth: row.auth ?? {} } };
  const connection = connectionOf({ authScheme: row.authScheme }, source);
  switch (connection.kind) {
    case 'oauth2':
      return {
        kind: 'oauth2',
        scheme: {
          environmentId,
          appId,
          name: row.name,
          baseUrl: row.baseUrl,
          schemeName: connection.schemeName,
          flow: connection.scheme,
          scopes: source ? scopesToRequest(source, connection.schemeName) : [],
        },
      };
    case 'credential':
      return {
        kind: 'other',
        reason: `its users connect by entering a credential (scheme "${connection.schemeName}"), not through OAuth`,
      };
    case 'none':
      return {
        kind: 'other',
        reason:
          row.acceptedVersion === null
            ? 'no snapshot of it is accepted yet'
            : 'no accepted operation needs a credential: its users connect nothing',
      };
    case 'unservable':
      return { kind: 'other', reason: connection.reason };
  }
}

/**
 * Why the flow's URLs may not be used, or null: the same outbound rules as a base URL (https, or
 * http on loopback; no loopback, private or link-local address unless MCP_APPS_ALLOW_PRIVATE).
 * The token URL receives the operator's client secret, users' codes and refresh tokens; the
 * authorization URL is where users are sent to sign in.
 */
export async function oauthFlowProblem(
  flow: OAuthFlow,
  allowPrivate: boolean,
): Promise<string | null> {
  const urls: [string, string][] = [
    ['authorization URL', flow.authorizationUrl],
    ['token URL', flow.tokenUrl],
    ...(flow.refreshUrl === null ? [] : [['refresh URL', flow.refreshUrl] as [string, string]]),
  ];
  for (const [label, url] of urls) {
    const problem = await serverUrlProblem(url, allowPrivate);
    if (problem) return `its ${label} ${url} ${problem}`;
  }
  return null;
}
