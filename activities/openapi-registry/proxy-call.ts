/**
 * The upstream step of a proxy call to an OpenAPI app (`/v1/proxy/{app}/{path}`): the caller's
 * method, canonical path, query, forwarded headers and body, sent to the app's pinned base URL
 * as the catalog proxy sends them to a catalog app, and the app's answer given back as it is
 * (raw body), as the catalog proxy gives it. The exchange is the one OpenAPI operations use
 * (app-exchange.ts: guarded connection, time and size limits, the credential and its one refresh,
 * writes sent once).
 *
 * The user's credential goes on as for an operation (`credential`, the same hook) whenever the
 * preparation settled a connection (proxy-operations.ts says when: as strictly as the matched
 * operations need it).
 */
import type { Context } from '@temporalio/activity';
import type { UpstreamOutcome } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { exchangeWithApp, refuseResentWrite } from './app-exchange.js';
import type { OperationCallDeps } from './operation-call.js';
import { findOpenApiProxyConnection } from './proxy-operations.js';

/** A proxy call as the workflow holds it (workflows/call-types.ts `ProxyCall`), with its place. */
export interface OpenApiProxyCall {
  environmentId: string;
  app: string;
  scope: CallScope;
  method: string;
  /** The canonical path below `/v1/proxy/{app}/` (api/calls/proxy-path.ts), policy's reading. */
  path: string;
  /** The raw query without `?`, or empty. */
  query: string;
  headers: Record<string, string>;
  bodyBase64: string | null;
}

/** The name of one `name=value` pair of a query, form-decoded as URLSearchParams reads it. */
function pairName(pair: string): string {
  const [name] = new URLSearchParams(pair).keys();
  return name ?? '';
}

/**
 * The caller's query with what the credential set: unchanged, byte for byte, where it set
 * nothing (the query policy judged is the query sent); else the caller's pairs of every other
 * name as written, then the credential's, which replace any of the same name (the caller cannot
 * override, nor double, the credential).
 */
function queryWith(raw: string, credentialSet: URLSearchParams, before: URLSearchParams): string {
  const names = new Set(
    [...credentialSet.keys()].filter(
      (name) => JSON.stringify(credentialSet.getAll(name)) !== JSON.stringify(before.getAll(name)),
    ),
  );
  if (names.size === 0) return raw;
  const kept = raw.split('&').filter((pair) => pair !== '' && !names.has(pairName(pair)));
  const added = new URLSearchParams();
  for (const name of names)
    for (const value of credentialSet.getAll(name)) added.append(name, value);
  return [...kept, added.toString()].join('&');
}

/**
 * Null when the environment has no OpenAPI app `call.app` (the caller then refuses the call as
 * to an unknown app).
 */
export async function proxyOutcome(
  deps: OperationCallDeps,
  call: OpenApiProxyCall,
  context: Context | null,
): Promise<UpstreamOutcome | null> {
  const found = await findOpenApiProxyConnection(deps.sql, call.environmentId, call.app);
  if (!found) return null;
  const write = call.scope !== 'read';
  refuseResentWrite(write, context);
  const { connection } = found;
  const credential =
    deps.credential && (connection.kind === 'credential' || connection.kind === 'oauth2')
      ? await deps.credential(connection.kind)
      : undefined;
  const base = `${found.baseUrl}/${call.path}`;
  const before = new URLSearchParams(call.query);
  const answer = await exchangeWithApp(
    deps,
    {
      method: call.method,
      headers: new Headers(call.headers),
      query: before,
      ...(call.bodyBase64 === null
        ? {}
        : { body: new Uint8Array(Buffer.from(call.bodyBase64, 'base64')) }),
      target: (query) => {
        const search = queryWith(call.query, query, before);
        return search === '' ? base : `${base}?${search}`;
      },
    },
    credential,
    { write, context },
  );
  if (!('bytes' in answer)) return answer;
  return {
    kind: 'response',
    status: answer.status,
    headers: answer.headers,
    body: { kind: 'raw', base64: answer.bytes.toString('base64') },
  };
}
