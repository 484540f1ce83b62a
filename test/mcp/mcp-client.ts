import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequestURLParams,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallStack } from '../support/call-stack.js';
import type { TestKey } from '../support/keys.js';
import { eventually } from '../support/eventually.js';

/** A session as `POST /v1/mcp/sessions` mints it, its address moved to the test API's port. */
export interface MintedSession {
  id: string;
  /** The address as minted (PUBLIC_URL of the test config). */
  url: string;
  /** The same address on the running test API. */
  address: URL;
  expires_at: string;
}

/** Tests run the API on a random port while PUBLIC_URL says port 0: the path is what counts. */
export function onTestApi(stack: CallStack, url: string): URL {
  return new URL(new URL(url).pathname, stack.api.url);
}

export async function mintSession(
  stack: CallStack,
  body: Record<string, unknown>,
  key: TestKey = stack.key,
): Promise<MintedSession> {
  const answer = await stack.request(key, 'POST', '/v1/mcp/sessions', { body });
  if (answer.status !== 201) {
    throw new Error(`minting failed: ${String(answer.status)} ${JSON.stringify(answer.body)}`);
  }
  const minted = answer.body as unknown as Omit<MintedSession, 'address'>;
  return { ...minted, address: onTestApi(stack, minted.url) };
}

/** The SDK's own client over Streamable HTTP, as an agent's MCP client would connect. */
export interface TestMcpClient {
  client: Client;
  /** URL-mode elicitations the server sent, in order (only with `urlElicitation`). */
  elicitations: ElicitRequestURLParams[];
  /**
   * The elicitations once `count` have come: one travels ahead of its tool result, but the
   * client runs its handler on its own schedule.
   */
  elicited(count: number): Promise<ElicitRequestURLParams[]>;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Every tool, following `nextCursor`; also how many pages it took. */
  listAll(): Promise<{ tools: Tool[]; pages: number }>;
  close(): Promise<void>;
}

export async function connectMcp(
  address: URL,
  options: { headers?: Record<string, string>; urlElicitation?: boolean } = {},
): Promise<TestMcpClient> {
  const client = new Client(
    { name: 'gatehouse-test-client', version: '1.0.0' },
    { capabilities: options.urlElicitation ? { elicitation: { url: {} } } : {} },
  );
  const elicitations: ElicitRequestURLParams[] = [];
  if (options.urlElicitation) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      if (request.params.mode === 'url') elicitations.push(request.params);
      return { action: 'accept' };
    });
  }
  const transport = new StreamableHTTPClientTransport(
    address,
    options.headers ? { requestInit: { headers: options.headers } } : {},
  );
  await client.connect(transport);
  return {
    client,
    elicitations,
    async elicited(count) {
      await eventually(
        `${String(count)} elicitations`,
        () => (elicitations.length >= count ? true : null),
        10,
      );
      return elicitations;
    },
    async call(name, args = {}) {
      return (await client.callTool({ name, arguments: args })) as CallToolResult;
    },
    async listAll() {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined);
      return { tools, pages };
    },
    close: () => client.close(),
  };
}

/** The first text block of a tool result: the sentence meant for the model. */
export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** `structuredContent.error`, for results that did not run the call. */
export function errorOf(result: CallToolResult): Record<string, unknown> {
  const error = (result.structuredContent as { error?: Record<string, unknown> } | undefined)
    ?.error;
  if (!error) throw new Error(`expected an error result, got ${JSON.stringify(result)}`);
  return error;
}
