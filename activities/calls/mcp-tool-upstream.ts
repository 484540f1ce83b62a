import { ApplicationFailure } from '@temporalio/activity';
import {
  UPSTREAM_UNREACHABLE,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import type { AccessTokenResult } from '../connections/access-token.js';
import type { McpApp } from '../db/mcp-apps.js';
import { callMcpTool, type McpToolOutcome } from './mcp-tool-call.js';

function refusal(status: number, value: unknown): UpstreamOutcome {
  return { kind: 'response', status, headers: {}, body: { kind: 'parsed', value } };
}

/** How often a write is tried while its `tools/call` provably never left. */
const WRITE_ATTEMPTS = 3;

function neverSent(error: unknown): boolean {
  if (!(error instanceof ApplicationFailure) || error.type !== UPSTREAM_UNREACHABLE) return false;
  const details = error.details?.[0] as UpstreamFailureDetails | undefined;
  return details?.sent === false;
}

export interface McpUpstreamCall {
  environmentId: string;
  /** null for a server that asks for no authorization (its calls need no connection). */
  connectionId: string | null;
  /** `<app>.<tool>`. */
  action: string;
  app: string;
  scope: CallScope;
  input: unknown;
}

/**
 * The upstream step of a call to a remote MCP server's tool: the app as registered,
 * the user's valid token (refreshed through `refresh/<id>` as for any connection; on a 401 one
 * forced refresh and one more try, as for catalog apps: a 401 means the server did nothing), and
 * one `tools/call`. A write is tried again only while nothing left: it may not happen twice.
 */
export async function mcpToolUpstream(
  deps: {
    findApp: (
      environmentId: string,
      id: string,
    ) => Promise<Pick<McpApp, 'id' | 'serverUrl'> | null>;
    accessToken: (connectionId: string, options: { force?: boolean }) => Promise<AccessTokenResult>;
    /** Records a wider scope for the connection's reconnect; false when it was asked already. */
    stepUp: (connectionId: string, scope: string) => Promise<boolean>;
    timeoutMs: number;
    limitBytes: number;
    allowPrivate: boolean;
  },
  call: McpUpstreamCall,
  signal: AbortSignal,
): Promise<UpstreamOutcome> {
  const app = await deps.findApp(call.environmentId, call.app);
  if (!app) return { kind: 'connection', status: 'missing' };
  const tool = call.action.slice(call.app.length + 1);
  const deadline = Date.now() + deps.timeoutMs;
  const once = async (force: boolean): Promise<McpToolOutcome> => {
    let accessToken: string | null = null;
    if (call.connectionId !== null) {
      const token = await deps.accessToken(call.connectionId, { force });
      if (!token.ok) {
        return token.refusedClient
          ? { kind: 'client_refused', ...token.refusedClient }
          : { kind: 'connection', status: token.status };
      }
      accessToken = token.accessToken;
    }
    return callMcpTool({
      app,
      tool,
      input: call.input,
      scope: call.scope,
      accessToken,
      deadline,
      limitBytes: deps.limitBytes,
      allowPrivate: deps.allowPrivate,
      signal,
    });
  };
  for (let tries = 1; ; tries++) {
    signal.throwIfAborted();
    try {
      let outcome = await once(false);
      if (outcome.kind === 'unauthorized' && call.connectionId !== null) outcome = await once(true);
      switch (outcome.kind) {
        case 'unauthorized':
          // Refused again with a fresh token: the server's own 401, as an app's would be.
          return refusal(401, null);
        case 'insufficient_scope':
          // Step-up: the user re-authorizes with the wider scope; asked for already and still not
          // granted, the server's 403 stands, as an app's would.
          return call.connectionId !== null && (await deps.stepUp(call.connectionId, outcome.scope))
            ? { kind: 'reauthorize', scope: outcome.scope }
            : refusal(403, { error: 'insufficient_scope', scope: outcome.scope });
        default:
          return outcome;
      }
    } catch (error) {
      if (call.scope === 'read' || !neverSent(error) || tries >= WRITE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** (tries - 1)));
    }
  }
}
