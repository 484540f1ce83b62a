import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { mcpServerFetch } from '../mcp-apps/server-fetch.js';

/** The server's answer grew past the body limit while it was read. */
export class AnswerTooLarge extends Error {
  constructor() {
    super('the answer is over the body limit');
  }
}

/**
 * The fetch of the SDK's transport: the registry's guarded one (the address connected to is
 * checked, as for webhooks, unless MCP_APPS_ALLOW_PRIVATE; answers cut at `limitBytes`, since a
 * tool's result travels through the call workflow and a larger one must fail here with 413, not
 * in Temporal). The transport reads streamed answers on its own and only reports their failure,
 * so `tripped` is told at once and ends the wait; and it keeps only the status of a refusal, so
 * a 403 is shown to `challenged` for its scope challenge.
 */
function toolCallFetch(
  options: { allowPrivate: boolean; limitBytes: number },
  tripped: () => void,
  challenged: (response: Response) => void,
): FetchLike {
  const guarded = mcpServerFetch({
    allowPrivate: options.allowPrivate,
    maxResponseBytes: options.limitBytes,
    onTooLarge: tripped,
  });
  return async (input, init) => {
    const response = await guarded(input, init);
    if (response.status === 403) challenged(response);
    return response;
  };
}

export interface McpSessionOptions {
  serverUrl: string;
  /** The user's access token; null for a server that asks for no authorization. */
  accessToken: string | null;
  allowPrivate: boolean;
  limitBytes: number;
  /**
   * An MCP session the server gave an earlier connection: requests carry it and `initialize` is
   * not sent again (the SDK's client reconnects), so a task bound to that session stays visible.
   */
  resume?: { sessionId: string; protocolVersion: string | null };
}

/**
 * One connection to a remote MCP server with the official SDK's client over Streamable HTTP,
 * not yet connected: `client.connect(transport)` initializes it, or only attaches it when
 * `resume` names a session. What the fetch saw while the transport read is kept here.
 */
export interface McpSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Set once an answer went over the body limit; `overLimit` is aborted with it. */
  readonly tooLarge: AnswerTooLarge | null;
  /** The scope of a 403 `insufficient_scope` challenge, once one came. */
  readonly scopeChallenge: string | null;
  /** Aborted when an answer went over the body limit: every wait on this session ends. */
  overLimit: AbortSignal;
  /** Closes the connection; the server's session stays (tasks may live in it). */
  close(): Promise<void>;
}

export function openMcpSession(options: McpSessionOptions): McpSession {
  const headers: Record<string, string> = options.accessToken
    ? { authorization: `Bearer ${options.accessToken}` }
    : {};
  const overLimit = new AbortController();
  const seen: { tooLarge: AnswerTooLarge | null; scope: string | null } = {
    tooLarge: null,
    scope: null,
  };
  const transport = new StreamableHTTPClientTransport(new URL(options.serverUrl), {
    requestInit: { headers, redirect: 'manual' },
    fetch: toolCallFetch(
      options,
      () => {
        seen.tooLarge = new AnswerTooLarge();
        overLimit.abort(seen.tooLarge);
      },
      (response) => {
        const challenge = extractWWWAuthenticateParams(response);
        if (challenge.error === 'insufficient_scope' && challenge.scope) {
          seen.scope = challenge.scope;
        }
      },
    ),
    ...(options.resume ? { sessionId: options.resume.sessionId } : {}),
  });
  if (options.resume?.protocolVersion) transport.setProtocolVersion(options.resume.protocolVersion);
  const client = new Client({ name: 'gatehouse', version: '1.0.0' });
  return {
    client,
    transport,
    get tooLarge() {
      return seen.tooLarge;
    },
    get scopeChallenge() {
      return seen.scope;
    },
    overLimit: overLimit.signal,
    close: () => client.close().catch(() => undefined),
  };
}
