import { preferForApp } from '../http/prefer.js';
import express, { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { CallRequest } from '../../workflows/call-types.js';
import { findEnvironmentAppRecord, MCP_APP_ID } from '../../activities/apps/directory.js';
import { openApiAppExists } from '../../activities/db/openapi-apps.js';
import { findOpenApiProxyView } from '../../activities/openapi-registry/proxy-operations.js';
import { proxyGrading } from '../../activities/openapi-registry/proxy-standing.js';
import { findApp, type CallScope } from '../../workflows/catalog/index.js';
import { scopeOfMethod } from '../../workflows/policy.js';
import { connectionListed } from '../../workflows/upstream-answer.js';
import type { ApiDeps } from '../deps.js';
import { callHeaders, callRequestOf } from '../calls/call-context.js';
import { runCall } from '../calls/call-answer.js';
import { canonicalProxyPath } from '../calls/proxy-path.js';
import { refusable, type RefusedCall } from '../calls/refusals.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { callerOf, checkAccess } from '../http/authorize.js';
import { externalUserId } from '../http/external-user-id.js';
import { parse } from '../http/validate.js';
import { CALL_ERROR_EXAMPLES, CALL_ERRORS } from '../openapi/error-examples.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { callWorkflowsFor } from '../temporal/call-workflows.js';

const PREFIX = '/v1/proxy/';

const proxyParams = z.strictObject({
  app: z.string().min(1).max(100),
  path: z.string().meta({
    description:
      "The app's own API path, sent as policy judged it: escapes of letters, digits and `-._~` decoded, runs of slashes merged, case kept; an encoded slash, a backslash, a control character, a malformed escape, a `.` or `..` segment or a `#` is refused (400)",
  }),
});
const proxyHeaders = callHeaders.extend({
  'service-user': externalUserId.meta({ description: "The user's external id" }),
});

for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
  registerConnectedUserOperation({
    method,
    path: '/v1/proxy/{app}/{path}',
    operationId: `proxy_${method}`,
    summary: `${method.toUpperCase()} on the app's own API as the user (scope ${scopeOfMethod(method)})`,
    description:
      `Sends \`${method.toUpperCase()}\` to the app's own API at \`{path}\` (in the one form policy judges, with the query unchanged), with the credentials of the user named in \`Service-User\`. ` +
      `It is governed as a \`${scopeOfMethod(method)}\` call of the action \`<app>.proxy\`: allowed, held for approval (403 \`approval_required\`; send the same request again once approved) or denied. ` +
      'For an app imported from an OpenAPI document, a request that is one of its operations (method and path template) is graded at least as strictly as the operation, bounded by the rules naming it, and refused while the operation is not callable by pinning. ' +
      "The app's answer comes back as it is (status, headers and body), except 400, 429, 502, 503 and 504, which become the `upstream_*` errors.",
    request: { params: proxyParams, headers: proxyHeaders },
    response: z.unknown().meta({ description: "The app's own response, passed through" }),
    errors: CALL_ERRORS,
    requires: { operation: 'call' },
    errorExamples: [
      ...CALL_ERROR_EXAMPLES,
      { when: 'unknown app', error: new NotFoundError('App "acmee"') },
    ],
  });
}

/**
 * Request headers that are ours (credentials, routing, tracing), describe one hop, or would
 * change the method the app acts on; the rest, such as `Accept` or an app's version header, go
 * to the app as the caller sent them. They are part of the call's identity (its fingerprint) and
 * shown to the approver, so what runs after an approval is what was approved.
 */
const NOT_FORWARDED = new Set([
  'authorization',
  'x-api-key',
  'cookie',
  'host',
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  // The body parser undoes a gzip, deflate or br body (the approver sees, and the app gets, the
  // plain bytes), so its label must not reach the app; other encodings are refused with 415.
  'content-encoding',
  'accept-encoding',
  'expect',
  'forwarded',
  'traceparent',
  'tracestate',
  'service-user',
  // Policy grades the proxy by its method: an app honouring one of these would let a POST (write)
  // or a GET (read) delete.
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
]);

function forwardedHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  // Headers the caller names in `Connection` (or the legacy `Proxy-Connection`) are for this hop
  // only (RFC 9110 §7.6.1).
  const hopByHop = connectionListed(req.get('connection'));
  for (const name of connectionListed(req.get('proxy-connection'))) hopByHop.add(name);
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || hopByHop.has(name)) continue;
    if (name.startsWith('gatehouse-') || name.startsWith('x-forwarded-')) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    if (name === 'prefer') {
      const kept = preferForApp(joined);
      if (kept !== null) headers[name] = kept;
      continue;
    }
    headers[name] = joined;
  }
  return headers;
}

/** The app id as a path segment; a malformed escape names no app. */
function decodedSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The raw path below `/v1/proxy/{app}/` and the raw query: never decoded, never re-encoded. */
function rawTarget(req: Request): { app: string | null; path: string; query: string } {
  const url = req.originalUrl;
  const queryAt = url.indexOf('?');
  const pathname = queryAt === -1 ? url : url.slice(0, queryAt);
  const rest = pathname.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  return {
    app: decodedSegment(slash === -1 ? rest : rest.slice(0, slash)),
    path: slash === -1 ? '' : rest.slice(slash + 1),
    query: queryAt === -1 ? '' : url.slice(queryAt + 1),
  };
}

/** A refused proxy call as far as its request tells: app, method, path and user as sent. */
function refusedProxy(req: Request): RefusedCall {
  const target = rawTarget(req);
  const app = target.app === null ? undefined : findApp(target.app);
  const user = proxyHeaders.shape['service-user'].safeParse(req.get('service-user'));
  const action = `${app?.id ?? target.app ?? '(malformed)'}.proxy`;
  return {
    action,
    scope: scopeOfMethod(req.method),
    userExternalId: user.success ? user.data : null,
    request: {
      user: req.get('service-user') ?? null,
      method: req.method,
      path: target.path,
      query: target.query || null,
      // Unknown when the refusal came before the body was read.
      body_bytes: Buffer.isBuffer(req.body) ? req.body.length : null,
    },
  };
}

/**
 * The app a proxy request goes to: a catalog app, or an OpenAPI app of the caller's environment
 * (its operations bound the proxy: activities/openapi-registry/proxy-standing.ts). A remote MCP
 * server registered as an app has no proxy: its tools are the only way in, each governed as an
 * action, so no rule can be gone around through the server's endpoint.
 */
async function proxyApp(
  deps: ApiDeps,
  res: Response,
  app: string | null,
): Promise<{ kind: 'catalog' | 'openapi'; id: string }> {
  if (app === null) throw new NotFoundError('App "(malformed)"');
  const catalog = findApp(app);
  if (catalog) return { kind: 'catalog', id: catalog.id };
  const environmentId = callerOf(res).environmentId;
  const found = await findEnvironmentAppRecord(deps.sql, environmentId, app);
  if (found?.kind === 'mcp') {
    const message = `App "${app}" is a remote MCP server: its tools are the only way in (POST /v1/actions/${app}.<tool>/run, or Gatehouse's MCP server), each governed as an action; it has no proxy.`;
    throw new InvalidRequestError(message, [
      { path: 'app', message: 'is a remote MCP server: call its tools instead' },
    ]);
  }
  if (MCP_APP_ID.test(app) && (await openApiAppExists(deps.sql, environmentId, app))) {
    return { kind: 'openapi', id: app };
  }
  throw new NotFoundError(`App "${app}"`);
}

/**
 * The scope a proxy request is judged at: its method's grade, and for an OpenAPI app the
 * strictest of that and the grades of the operations its method and path are, so an endpoint an
 * operator graded stricter than its method is no looser through the proxy.
 */
async function proxyScope(
  deps: ApiDeps,
  res: Response,
  app: { kind: 'catalog' | 'openapi'; id: string },
  method: string,
  path: string,
): Promise<CallScope> {
  if (app.kind === 'catalog') return scopeOfMethod(method);
  const view = await findOpenApiProxyView(deps.sql, callerOf(res).environmentId, app.id);
  if (!view) throw new NotFoundError(`App "${app.id}"`);
  return proxyGrading(view, method, path).scope;
}

/** The call a proxy request makes, or the refusal of one the app could not receive as sent. */
async function proxyCall(deps: ApiDeps, req: Request, res: Response): Promise<CallRequest> {
  const settings = deps.config.approvals;
  const target = rawTarget(req);
  const app = await proxyApp(deps, res, target.app);
  const { 'service-user': user } = parse(
    proxyHeaders.pick({ 'service-user': true }),
    { 'service-user': req.get('service-user') },
    'header',
  );
  // Policy judges, audit records and the app receives this one reading of the path.
  const path = canonicalProxyPath(target.path);
  if ('problem' in path) {
    const message = `The path ${path.problem}: the app could not be sent the path policy judges.`;
    throw new InvalidRequestError(message, [{ path: 'path', message: path.problem }]);
  }
  // A fragment never reaches the app: a URL parser drops it on the way.
  if (target.query.includes('#')) {
    const message = 'The query must not contain "#": the app could not receive it unchanged.';
    throw new InvalidRequestError(message, [{ path: 'query', message: 'must not contain "#"' }]);
  }
  const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : null;
  // fetch cannot send a body with these methods: refused here rather than failing upstream.
  if (body && (req.method === 'GET' || req.method === 'HEAD')) {
    const message = `A ${req.method} request to the app cannot carry a body.`;
    throw new InvalidRequestError(message, [{ path: 'body', message: 'must be empty' }]);
  }
  const scope = await proxyScope(deps, res, app, req.method, path.path);
  return callRequestOf(
    req,
    res,
    user,
    {
      kind: 'proxy',
      app: app.id,
      scope,
      method: req.method,
      path: path.path,
      query: target.query,
      headers: forwardedHeaders(req),
      bodyBase64: body ? body.toString('base64') : null,
    },
    settings,
  );
}

/**
 * `ANY /v1/proxy/{app}/{path}`: the app's own API with the user's credentials, graded by method,
 * governed and audited like an action. Mounted before the JSON parser: the body goes to the app as
 * the bytes the caller sent.
 */
export function proxyRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);
  // Every refusal up to the call's start is audited; the key's access is checked before the body is
  // read.
  router.use(
    async (req, res, next) => {
      await refusable(
        deps,
        req,
        res,
        () => refusedProxy(req),
        () => {
          checkAccess(callerOf(res), { operation: 'call' });
        },
      );
      next();
    },
    express.raw({ type: () => true, limit: deps.config.api.bodyLimitBytes }),
    async (req, res) => {
      const call = await refusable(
        deps,
        req,
        res,
        () => refusedProxy(req),
        () => proxyCall(deps, req, res),
      );
      await runCall(res, calls, call, deps);
    },
  );
  return router;
}
