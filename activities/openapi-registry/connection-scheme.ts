/**
 * How an OpenAPI app's users connect to it: by which of the document's security schemes. A user
 * has one connection per app, so an app is connected one way: the scheme the operator chose
 * (`auth_scheme`), else the supported scheme that alone serves the most operations of the accepted
 * snapshot (ties broken by name, so the choice never depends on the document's key order). The
 * accepted snapshot is the one read: a refreshed document that moves a token URL or a key's header
 * changes nothing until an operator accepts it, as for the base URL.
 *
 * An operation is served with the connection when it needs no credential, or when one of its
 * security alternatives is exactly that scheme. Anything else (it needs only other schemes, or
 * several at once) is refused by operation-standing.ts naming why.
 */
import type { CredentialScheme } from '../credentials/schemes.js';
import type { ImportSummary, OpenApiApp } from '../db/openapi-apps.js';
import type { AuthScheme, OperationDescriptor } from '../openapi-apps/index.js';

/** What the choice reads of an operation: its security requirements alone. */
type Secured = Pick<OperationDescriptor, 'security'>;

/**
 * What the choice reads of a snapshot: the operations' security and the document's schemes (a
 * caller may read just these from Postgres, not a large document's whole descriptors).
 */
export interface SchemeSource {
  descriptors: readonly Secured[];
  import: Pick<ImportSummary, 'auth' | 'schemeUse'>;
}

export type OpenApiConnection =
  /** No accepted operation needs a credential: the app's users connect nothing. */
  | { kind: 'none' }
  /** The user enters an API key, bearer token or basic credential on the hosted connect page. */
  | { kind: 'credential'; schemeName: string; scheme: CredentialScheme }
  /** The user connects through the OAuth 2.0 authorization-code flow the document describes. */
  | {
      kind: 'oauth2';
      schemeName: string;
      scheme: Extract<AuthScheme, { kind: 'oauth2' }>;
    }
  /** The operator chose a scheme the accepted snapshot does not have, or cannot be served. */
  | { kind: 'unservable'; schemeName: string; reason: string };

/** The scheme an operation's alternative names when it is that one scheme alone. */
function soleSchemes(descriptor: Secured): string[] {
  return descriptor.security.flatMap((alternative) => {
    const [only] = alternative.schemes;
    return alternative.schemes.length === 1 && only ? [only.scheme] : [];
  });
}

/** Whether the operation can be called without any credential. */
export function needsNoCredential(descriptor: Secured): boolean {
  return (
    descriptor.security.length === 0 ||
    descriptor.security.some((alternative) => alternative.schemes.length === 0)
  );
}

/** Whether the operation is served with a connection of `schemeName`. */
export function servedByScheme(descriptor: Secured, schemeName: string): boolean {
  return soleSchemes(descriptor).includes(schemeName);
}

function connectionBy(name: string, scheme: AuthScheme | undefined): OpenApiConnection {
  if (!scheme) {
    return {
      kind: 'unservable',
      schemeName: name,
      reason: `the accepted snapshot's document declares no security scheme "${name}"`,
    };
  }
  switch (scheme.kind) {
    case 'oauth2':
      return { kind: 'oauth2', schemeName: name, scheme };
    case 'api_key':
      return {
        kind: 'credential',
        schemeName: name,
        scheme: { scheme: 'api_key', in: scheme.in, name: scheme.name },
      };
    case 'http_bearer':
      return { kind: 'credential', schemeName: name, scheme: { scheme: 'bearer' } };
    case 'http_basic':
      return { kind: 'credential', schemeName: name, scheme: { scheme: 'basic' } };
    case 'unsupported':
      return { kind: 'unservable', schemeName: name, reason: `scheme "${name}" ${scheme.reason}` };
  }
}

/**
 * The supported schemes by how many operations of the snapshot each alone serves, most first. Kept
 * with the snapshot when it is imported (`import.schemeUse`), so a standing narrowed to one
 * operation (what a call reads) chooses as the whole snapshot does.
 */
export function schemeRanking(snapshot: SchemeSource): { name: string; operations: number }[] {
  if (snapshot.import.schemeUse) return snapshot.import.schemeUse;
  return rankSchemes(snapshot);
}

/** `schemeRanking` counted from the snapshot's operations. */
export function rankSchemes(snapshot: SchemeSource): { name: string; operations: number }[] {
  const counts = new Map<string, number>();
  for (const descriptor of snapshot.descriptors) {
    if (needsNoCredential(descriptor)) continue;
    for (const name of new Set(soleSchemes(descriptor))) {
      const scheme = Object.hasOwn(snapshot.import.auth, name)
        ? snapshot.import.auth[name]
        : undefined;
      if (!scheme || scheme.kind === 'unsupported') continue;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }
  return [...counts]
    .map(([name, operations]) => ({ name, operations }))
    .sort((a, b) => b.operations - a.operations || (a.name < b.name ? -1 : 1));
}

/** How the app's users connect, as of `snapshot` (the accepted one; null: none accepted yet). */
export function connectionOf(
  app: Pick<OpenApiApp, 'authScheme'>,
  snapshot: SchemeSource | null,
): OpenApiConnection {
  const auth = snapshot?.import.auth ?? {};
  if (app.authScheme !== null) {
    return connectionBy(
      app.authScheme,
      Object.hasOwn(auth, app.authScheme) ? auth[app.authScheme] : undefined,
    );
  }
  const [first] = snapshot ? schemeRanking(snapshot) : [];
  return first ? connectionBy(first.name, auth[first.name]) : { kind: 'none' };
}
