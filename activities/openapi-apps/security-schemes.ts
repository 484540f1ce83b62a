import { bounded, quoted } from './limits.js';
import { isObject, member, type DocumentReferences, type JsonObject } from './references.js';

/**
 * What a connection to the app needs, from the document's security schemes. Gatehouse serves a
 * user's credential of one scheme per call: OAuth 2.0 with the authorization-code flow (a user
 * connects through the hosted connect page), an API key in a header or the query, or an HTTP
 * bearer or basic credential. Every other scheme is kept as `unsupported` with the reason, so an
 * operator sees why; what the connection layer does with the supported ones is its own choice.
 */
export type AuthScheme =
  | {
      kind: 'oauth2';
      authorizationUrl: string;
      tokenUrl: string;
      refreshUrl: string | null;
      /** Scope → what the document says it allows. */
      scopes: Record<string, string>;
    }
  | { kind: 'api_key'; in: 'header' | 'query'; name: string }
  | { kind: 'http_bearer'; bearerFormat: string | null }
  | { kind: 'http_basic' }
  | { kind: 'unsupported'; type: string; reason: string };

/**
 * One way an operation may be authorized: every scheme listed together (the document's security
 * requirement object). An operation may be called if any one of its alternatives is servable.
 */
export interface SecurityAlternative {
  schemes: { scheme: string; scopes: string[] }[];
}

/** URLs in a scheme: absolute http(s), or relative to the document's own URL when it has one. */
function absoluteUrl(value: unknown, documentUrl: string | null): string | null {
  if (typeof value !== 'string' || value === '') return null;
  try {
    const url = documentUrl === null ? new URL(value) : new URL(value, documentUrl);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

function unsupported(type: string, reason: string): AuthScheme {
  return { kind: 'unsupported', type, reason };
}

function oauth2Of(scheme: JsonObject, documentUrl: string | null): AuthScheme {
  const flows = member(scheme, 'flows');
  const flow = isObject(flows) ? member(flows, 'authorizationCode') : undefined;
  if (!isObject(flow)) {
    const named = isObject(flows) ? Object.keys(flows).join(', ') : 'none';
    return unsupported(
      'oauth2',
      `has no authorization-code flow (it has ${named || 'none'}): users connect through the authorization-code flow only`,
    );
  }
  const authorizationUrl = absoluteUrl(member(flow, 'authorizationUrl'), documentUrl);
  const tokenUrl = absoluteUrl(member(flow, 'tokenUrl'), documentUrl);
  if (authorizationUrl === null || tokenUrl === null) {
    return unsupported(
      'oauth2',
      'its authorization-code flow lacks an absolute http(s) authorizationUrl or tokenUrl',
    );
  }
  const scopes = member(flow, 'scopes');
  return {
    kind: 'oauth2',
    authorizationUrl,
    tokenUrl,
    refreshUrl: absoluteUrl(member(flow, 'refreshUrl'), documentUrl),
    scopes: isObject(scopes)
      ? Object.fromEntries(
          Object.entries(scopes).map(([name, text]) => [
            name,
            typeof text === 'string' ? bounded(text, 300) : '',
          ]),
        )
      : {},
  };
}

/** One security scheme of the document, normalized. */
export function authSchemeOf(scheme: unknown, documentUrl: string | null): AuthScheme {
  if (!isObject(scheme)) return unsupported('unknown', 'is not a security scheme object');
  const type = member(scheme, 'type');
  switch (type) {
    case 'oauth2':
      return oauth2Of(scheme, documentUrl);
    case 'apiKey': {
      const where = member(scheme, 'in');
      const name = member(scheme, 'name');
      if (typeof name !== 'string' || name === '') {
        return unsupported('apiKey', 'names no header or query parameter for the key');
      }
      if (where === 'header' || where === 'query') return { kind: 'api_key', in: where, name };
      return unsupported(
        'apiKey',
        `sends the key in ${quoted(String(where))}: Gatehouse sends API keys in a header or the query, never as a cookie`,
      );
    }
    case 'http': {
      const kind = member(scheme, 'scheme');
      const name = typeof kind === 'string' ? kind.toLowerCase() : '';
      if (name === 'bearer') {
        const format = member(scheme, 'bearerFormat');
        return { kind: 'http_bearer', bearerFormat: typeof format === 'string' ? format : null };
      }
      if (name === 'basic') return { kind: 'http_basic' };
      return unsupported(
        'http',
        `uses the HTTP scheme ${quoted(String(kind))}: Gatehouse serves bearer and basic`,
      );
    }
    case 'openIdConnect':
      return unsupported(
        'openIdConnect',
        'is OpenID Connect discovery, which the importer does not follow: describe the provider as an oauth2 authorization-code scheme instead',
      );
    case 'mutualTLS':
      return unsupported('mutualTLS', 'needs a client certificate, which Gatehouse does not hold');
    default:
      return unsupported(
        typeof type === 'string' ? type : 'unknown',
        `is of type ${quoted(String(type))}, which OpenAPI does not define`,
      );
  }
}

/** Every security scheme the document declares, normalized, by name. */
export function authSchemesOf(
  components: unknown,
  refs: DocumentReferences,
  documentUrl: string | null,
): Record<string, AuthScheme> {
  const schemes = isObject(components) ? member(components, 'securitySchemes') : undefined;
  if (!isObject(schemes)) return {};
  return Object.fromEntries(
    Object.entries(schemes).map(([name, scheme]) => {
      let resolved: unknown;
      try {
        resolved = refs.follow(scheme, `security scheme ${quoted(name)}`);
      } catch (error) {
        const why = error instanceof Error ? error.message : 'unresolvable';
        return [name, unsupported('unknown', `cannot be resolved: ${why}`)];
      }
      return [name, authSchemeOf(resolved, documentUrl)];
    }),
  );
}

/**
 * An operation's security requirements (its own `security`, else the document's), as
 * alternatives: `[]` means none is required. A requirement `{}` (anonymous access allowed) is an
 * alternative with no schemes.
 */
export function securityOf(operation: JsonObject, document: JsonObject): SecurityAlternative[] {
  const own = member(operation, 'security');
  const requirements = Array.isArray(own) ? own : member(document, 'security');
  if (!Array.isArray(requirements)) return [];
  return requirements.filter(isObject).map((requirement) => ({
    schemes: Object.entries(requirement).map(([scheme, scopes]) => ({
      scheme,
      scopes: Array.isArray(scopes)
        ? scopes.filter((scope): scope is string => typeof scope === 'string')
        : [],
    })),
  }));
}

/**
 * Why no alternative of an operation can be served with one credential of a supported scheme,
 * or null when one can (or none is required). Several schemes required together (an API key
 * and a bearer token at once) are one credential too many.
 */
export function unservableBecause(
  alternatives: readonly SecurityAlternative[],
  schemes: Readonly<Record<string, AuthScheme>>,
): string | null {
  if (alternatives.length === 0) return null;
  const reasons: string[] = [];
  for (const alternative of alternatives) {
    if (alternative.schemes.length === 0) return null;
    if (alternative.schemes.length > 1) {
      reasons.push(
        `${alternative.schemes.map((one) => one.scheme).join(' and ')} together (Gatehouse sends one credential)`,
      );
      continue;
    }
    const [only] = alternative.schemes;
    if (!only) continue;
    const scheme = Object.hasOwn(schemes, only.scheme) ? schemes[only.scheme] : undefined;
    if (!scheme) reasons.push(`${only.scheme}, which the document does not declare`);
    else if (scheme.kind === 'unsupported') reasons.push(`${only.scheme}, which ${scheme.reason}`);
    else return null;
  }
  return `it requires ${reasons.join(', or ')}`;
}
