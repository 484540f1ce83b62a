import { OpenApiImportError, quoted } from './limits.js';
import { isObject, member } from './references.js';

/**
 * Where the app's API is: every imported action's path is below it. The operator's override
 * wins; else the document's first server (OpenAPI `servers[0].url`, its `{variables}` replaced by
 * their defaults; Swagger 2.0's `schemes`, `host` and `basePath` become that server); a relative
 * one (`/v1`, or none at all, which OpenAPI reads as `/`) is resolved against the URL the
 * document was fetched from, and refused when it came as text with no URL. Only http(s) URLs
 * without credentials or a fragment are taken. Whether the address may be called at all (a
 * private or loopback host) is the registry's check when the app is stored and on every call,
 * as for remote MCP servers; the importer only says what the document names.
 */
export interface BaseUrl {
  /** Absolute, without a trailing slash: `${url}${path}` is an action's URL. */
  url: string;
  source: 'override' | 'servers' | 'document_url';
}

function checked(candidate: string, what: string): string {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    throw new OpenApiImportError(`${what} ${quoted(candidate)} is not a URL`, 'base_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new OpenApiImportError(`${what} ${quoted(candidate)} is not http(s)`, 'base_url');
  }
  if (url.username !== '' || url.password !== '') {
    throw new OpenApiImportError(`${what} must not hold credentials`, 'base_url');
  }
  if (url.hash !== '' || url.search !== '') {
    throw new OpenApiImportError(
      `${what} ${quoted(candidate)} must not have a query or fragment`,
      'base_url',
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** A server's URL with each `{variable}` replaced by its default. */
function substituted(server: Record<string, unknown>): string | null {
  const url = member(server, 'url');
  if (typeof url !== 'string') return null;
  const variables = member(server, 'variables');
  return url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
    const variable = isObject(variables) ? member(variables, name) : undefined;
    const fallback = isObject(variable) ? member(variable, 'default') : undefined;
    if (typeof fallback !== 'string') {
      throw new OpenApiImportError(
        `the server URL ${quoted(url)} has the variable ${whole} without a default`,
        'base_url',
      );
    }
    return fallback;
  });
}

export function baseUrlOf(
  servers: unknown,
  options: { override: string | null; documentUrl: string | null },
): BaseUrl {
  if (options.override !== null) {
    return { url: checked(options.override, 'the base URL'), source: 'override' };
  }
  const first = Array.isArray(servers) ? (servers as unknown[])[0] : undefined;
  const named = isObject(first) ? substituted(first) : '/';
  if (named === null) {
    throw new OpenApiImportError("the document's first server has no URL", 'base_url');
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(named)) {
    return { url: checked(named, "the document's server URL"), source: 'servers' };
  }
  if (options.documentUrl === null) {
    throw new OpenApiImportError(
      `the document's server URL ${quoted(named)} is relative and the document came without a URL to resolve it against: give the base URL`,
      'base_url',
    );
  }
  let resolved: string;
  try {
    resolved = new URL(named, options.documentUrl).href;
  } catch {
    throw new OpenApiImportError(
      `the document URL ${quoted(options.documentUrl)} is not a URL to resolve ${quoted(named)} against`,
      'base_url',
    );
  }
  return { url: checked(resolved, 'the server URL'), source: 'document_url' };
}
