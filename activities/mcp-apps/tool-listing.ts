import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { deadlineSignal, type DeadlineSignal } from '../../infra/deadline-signal.js';
import type { McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';
import { documentFetch } from '../mcp-auth/auth-fetch.js';
import { mcpServerFetch } from './server-fetch.js';
import { snapshotProblem } from './snapshot-limits.js';
import { toolSchemasProblem } from './tool-input.js';

/** How a listing failed, which says what the caller can do about it. */
export type ListingFailureKind =
  /** Nothing answered (refused, unresolvable, reset): try again later, or fix the URL. */
  | 'unreachable'
  /** No answer within the time allowed. */
  | 'timeout'
  /** Something answered, but not as an MCP server whose tools Gatehouse can keep. */
  | 'not_mcp'
  /** The server refused the access token a refresh used. */
  | 'unauthorized';

export class ListingError extends Error {
  constructor(
    readonly kind: ListingFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ListingError';
  }
}

/** What the server said: its tools, or that it needs authorization (an OAuth-protected server). */
export type ServerListing =
  | {
      kind: 'tools';
      tools: McpToolDefinition[];
      /**
       * The MCP protocol revision the server's `initialize` answered (the SDK offers its newest
       * and takes any it supports), which every request of the session then declares.
       */
      protocolVersion: string | null;
    }
  | { kind: 'oauth'; resource: string; authorizationServers: string[] };

export interface ListingOptions {
  /** MCP_APPS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** The whole listing's bound: connect, every page, and discovery. */
  timeoutMs: number;
  /** A user's token, for a server that asks for authorization (refresh after a connection). */
  accessToken?: string;
}

/** One HTTP answer of a listing may be this large; a snapshot's own limits are smaller. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** `tools/list` pages followed; a server that pages for ever is refused. */
const MAX_PAGES = 50;

/** What Gatehouse keeps of a tool: what an agent reads and what it is governed by. */
function definitionOf(tool: Tool): McpToolDefinition {
  const hints = tool.annotations;
  const annotations = hints
    ? Object.fromEntries(
        (
          ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const
        ).flatMap((key) => (hints[key] === undefined ? [] : [[key, hints[key]]])),
      )
    : undefined;
  const taskSupport = tool.execution?.taskSupport;
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
    // `forbidden` and no word at all mean the same (a plain call): only a tool that may run as a
    // task keeps it, so a server that starts saying `forbidden` lists nothing new.
    ...(taskSupport === 'optional' || taskSupport === 'required'
      ? { execution: { taskSupport } }
      : {}),
  };
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function causeMessage(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error ? cause.message : 'network error';
}

/** A failure of the SDK's client, in the kinds above. */
function failureOf(error: unknown, tooLarge: boolean): ListingError {
  if (error instanceof ListingError) return error;
  if (tooLarge) {
    return new ListingError(
      'not_mcp',
      `answered with more than ${String(MAX_RESPONSE_BYTES)} bytes at once`,
    );
  }
  if (
    (error instanceof DOMException &&
      (error.name === 'TimeoutError' || error.name === 'AbortError')) ||
    (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))
  ) {
    return new ListingError('timeout', 'did not answer in time');
  }
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const code = causeCode(error);
    if (code === 'ERR_WEBHOOK_NON_PUBLIC_ADDRESS') {
      return new ListingError(
        'not_mcp',
        `${causeMessage(error)} (MCP_APPS_ALLOW_PRIVATE=true allows it)`,
      );
    }
    return new ListingError('unreachable', `could not be reached (${code ?? causeMessage(error)})`);
  }
  if (error instanceof StreamableHTTPError) {
    return new ListingError('not_mcp', `did not answer as an MCP server (${error.message})`);
  }
  if (error instanceof McpError) {
    return new ListingError('not_mcp', `answered with an MCP error (${error.message})`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ListingError('not_mcp', `did not answer as an MCP server (${message.slice(0, 300)})`);
}

/**
 * RFC 9728 protected resource metadata, as the SDK discovers it (from the `WWW-Authenticate`
 * of the 401, else the well-known paths): a server that asks for authorization without saying
 * where users authorize is not one anyone can connect to.
 */
async function authorizationOf(
  serverUrl: string,
  unauthorized: Response,
  fetchFn: FetchLike,
): Promise<ServerListing> {
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
  let metadata;
  try {
    metadata = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      resourceMetadataUrl ? { resourceMetadataUrl } : {},
      // Bounded by the listing's deadline already; refused when nested too deep.
      documentFetch(fetchFn, null),
    );
  } catch (error) {
    const why = error instanceof Error ? error.message : 'unreadable';
    throw new ListingError(
      'not_mcp',
      `asks for authorization (401) but publishes no OAuth protected resource metadata (RFC 9728): ${why}`,
    );
  }
  const servers = metadata.authorization_servers ?? [];
  if (servers.length === 0) {
    throw new ListingError(
      'not_mcp',
      'asks for authorization (401) but its protected resource metadata names no authorization server',
    );
  }
  return { kind: 'oauth', resource: metadata.resource, authorizationServers: servers };
}

/**
 * Discovery and `tools/list` of a remote MCP server with the official SDK client over
 * Streamable HTTP: its tools (every page, within the snapshot limits), or, for a
 * server that answers 401, what the SDK's discovery finds of its authorization. Throws a
 * ListingError saying what went wrong. The session is ended (DELETE) before returning.
 */
export async function listServerTools(
  serverUrl: string,
  options: ListingOptions,
): Promise<ServerListing> {
  const deadline = deadlineSignal(options.timeoutMs);
  /** Each request's signal: the listing's deadline, or the transport's own abort. */
  const requests: DeadlineSignal[] = [];
  const seen = { unauthorized: null as Response | null, tooLarge: false };
  const guarded = mcpServerFetch({
    allowPrivate: options.allowPrivate,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    onTooLarge: () => {
      seen.tooLarge = true;
    },
  });
  const fetchFn: FetchLike = async (url, init) => {
    const request = deadlineSignal(null, init?.signal, deadline.signal);
    requests.push(request);
    const response = await guarded(url, { ...init, signal: request.signal });
    if (response.status === 401) seen.unauthorized = response.clone();
    return response;
  };
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), {
    fetch: fetchFn,
    ...(options.accessToken
      ? { requestInit: { headers: { authorization: `Bearer ${options.accessToken}` } } }
      : {}),
    // A listing is one short exchange: no standalone stream worth reconnecting.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1000,
      maxReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
    },
  });
  const client = new Client({ name: 'gatehouse', title: 'Gatehouse', version: '1.0.0' });
  const requestOptions = { signal: deadline.signal, timeout: options.timeoutMs };
  try {
    try {
      await client.connect(transport, requestOptions);
    } catch (error) {
      const unauthorized = seen.unauthorized;
      if (unauthorized && !options.accessToken) {
        return await authorizationOf(serverUrl, unauthorized, fetchFn);
      }
      if (unauthorized) {
        throw new ListingError('unauthorized', 'refused the access token (401)');
      }
      throw error;
    }
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      if (pages === MAX_PAGES) {
        throw new ListingError('not_mcp', `pages tools/list beyond ${String(MAX_PAGES)} pages`);
      }
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions);
      tools.push(...page.tools);
      const problem = snapshotProblem(tools.map(definitionOf));
      if (problem) throw new ListingError('not_mcp', problem);
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    const definitions = tools.map(definitionOf);
    // Last, and only for a listing kept otherwise: compiling is the costly check.
    const problem = await toolSchemasProblem(definitions);
    if (problem) throw new ListingError('not_mcp', problem);
    await transport.terminateSession().catch(() => undefined);
    return {
      kind: 'tools',
      tools: definitions,
      protocolVersion: transport.protocolVersion ?? null,
    };
  } catch (error) {
    throw failureOf(error, seen.tooLarge);
  } finally {
    await client.close().catch(() => undefined);
    for (const request of requests) request.clear();
    deadline.clear();
  }
}
