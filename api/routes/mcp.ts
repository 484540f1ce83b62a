import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { ApiDeps } from '../deps.js';
import { ApiError, MethodNotAllowedError } from '../errors.js';
import { authenticate } from '../http/authenticate.js';
import { jsonBody, mediaTypeOf, notReadableAs } from '../http/json-body.js';
import {
  issueClientSessionId,
  readClientSessionId,
  type ClientSession,
} from '../mcp/client-session.js';
import { jsonRpcErrorBodies } from '../mcp/json-rpc-errors.js';
import { keyPrincipal, sessionPrincipal, type McpPrincipal } from '../mcp/principal.js';
import { guardRequestParams, refuseEmptyBatch } from '../mcp/request-guards.js';
import { mcpServer } from '../mcp/server.js';
import { TaskWaiters } from '../mcp/tasks/task-waiters.js';
import { KEY_PATH, SESSION_PATH, requireSomeCredential } from '../mcp/session-address.js';
import { callWorkflowsFor } from '../temporal/call-workflows.js';

/**
 * What the client declared at `initialize`, from the signed `Mcp-Session-Id` it sends back. An
 * id this service did not sign is an ended session: 404, and the client initializes anew.
 */
function clientSessionOf(req: Request, deps: ApiDeps): ClientSession {
  const id = req.get('mcp-session-id');
  if (id === undefined || isInitializeRequest(req.body)) return { urlElicitation: false };
  const session = readClientSessionId(deps.config.encryption, id);
  if (!session) {
    throw new ApiError('not_found', 'Unknown MCP session id: initialize a new session.');
  }
  return session;
}

/**
 * MCP over Streamable HTTP, stateless: each POST gets its own server and transport, which end with
 * the response. No GET stream (a stateless server has nothing to send on it) and no DELETE (the
 * session id holds no state to end): both 405, as the transport spec allows.
 */
/**
 * @param limited wraps a key check with the service's rate limits (api/http/rate-limit.ts), so
 * MCP addresses and keys are counted like every other credential.
 */
export function mcpRoutes(
  deps: ApiDeps,
  limited: (check: RequestHandler) => RequestHandler = (check) => check,
): Router {
  const router = Router();
  const sessions = new WeakMap<Request, McpPrincipal>();
  const sessionCheck: RequestHandler = async (req, res, next) => {
    const principal = await sessionPrincipal(deps.sql, String(req.params.secret));
    sessions.set(req, principal);
    res.locals.caller = principal.caller;
    next();
  };
  const calls = callWorkflowsFor(deps);
  const taskWaiters = new TaskWaiters(deps.sql);
  const publicOrigin = new URL(deps.config.api.publicUrl).origin;

  const serve =
    (
      principalOf: (req: Request, res: Response) => Promise<McpPrincipal> | McpPrincipal,
    ): RequestHandler =>
    async (req, res) => {
      const principal = await principalOf(req, res);
      res.locals.caller = principal.caller;
      req.log = req.log.child({
        keyId: principal.caller.keyId,
        environment: principal.caller.environmentName,
        ...(principal.sessionId ? { mcpSession: principal.sessionId } : {}),
      });
      if (req.method !== 'POST') {
        throw new MethodNotAllowedError(
          'This MCP endpoint takes POST only (stateless Streamable HTTP).',
          ['POST'],
        );
      }
      // The transport reads messages sent as application/json and answers anything else 415
      // itself; refused here, the 415 keeps the envelope in its JSON-RPC error like every other.
      if (mediaTypeOf(req.get('content-type')) !== 'application/json') {
        throw notReadableAs(
          'MCP messages are sent with Content-Type: application/json',
          req.get('content-type'),
        );
      }
      refuseEmptyBatch(req.body);
      const client = clientSessionOf(req, deps);
      const server = mcpServer({
        deps,
        calls,
        principal,
        req,
        res,
        urlElicitation: client.urlElicitation,
        taskWaiters,
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        // MCP asks servers to check Origin against DNS rebinding: only our own pages may post.
        enableDnsRebindingProtection: true,
        allowedOrigins: [publicOrigin],
      });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      guardRequestParams(transport);
      const body: unknown = req.body;
      if (isInitializeRequest(body)) {
        const elicitation = body.params.capabilities.elicitation;
        res.setHeader(
          'Mcp-Session-Id',
          issueClientSessionId(deps.config.encryption, {
            urlElicitation: elicitation?.url !== undefined,
          }),
        );
      }
      await transport.handleRequest(req, res, body);
    };

  const parsed = jsonBody({ limitBytes: deps.config.api.bodyLimitBytes });
  router.all(
    SESSION_PATH,
    ...parsed,
    limited(sessionCheck),
    serve((req) => {
      const principal = sessions.get(req);
      if (!principal) throw new Error('the MCP session was not checked');
      return principal;
    }),
  );
  const keyCheck = authenticate(deps.sql);
  router.all(
    KEY_PATH,
    ...parsed,
    limited((req, res, next) => {
      requireSomeCredential(req);
      return keyCheck(req, res, next);
    }),
    serve(keyPrincipal),
  );
  router.use([KEY_PATH, SESSION_PATH], jsonRpcErrorBodies);
  return router;
}
