import { beforeAll, describe, expect, it } from '@jest/globals';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { mcpToolUpstream, type McpUpstreamCall } from '../../activities/calls/mcp-tool-upstream.js';
import type { CallAnswer, UpstreamOutcome } from '../../workflows/call-types.js';
import { settleOutcome } from '../../workflows/upstream-settlement.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The upstream step of a call to a remote MCP tool against a server made with the
 * official SDK's server: what each kind of answer becomes for the caller. The server asks for a
 * scope per tool, as MCP's authorization allows (a 403 `insufficient_scope` challenge naming the
 * scope it wants): no reference server does, so this one is made here from the SDK's own parts.
 */
const TOKENS: Record<string, string[]> = { basic: ['tasks:read'], wide: ['tasks:read', 'admin'] };

let server: http.Server;
let url: string;
const seen: { method: string; tool?: string }[] = [];

function mcpServer(): McpServer {
  const mcp = new McpServer({ name: 'scoped', version: '1.0.0' });
  mcp.registerTool(
    'report',
    { description: 'An admin report', inputSchema: { period: z.string() } },
    ({ period }) => ({ content: [{ type: 'text', text: `report for ${period}` }] }),
  );
  mcp.registerTool('fails', { description: 'Always fails' }, () => ({
    content: [{ type: 'text', text: 'no such task' }],
    isError: true,
  }));
  mcp.registerTool('big', { description: 'A large answer' }, () => ({
    content: [{ type: 'text', text: 'x'.repeat(50_000) }],
  }));
  return mcp;
}

const started = stopsAfterAll();

beforeAll(async () => {
  const app = express();
  app.use(express.json());
  app.post('/mcp', async (req, res) => {
    const body = req.body as { method?: string; params?: { name?: string } };
    seen.push({
      method: body.method ?? '',
      ...(body.params?.name ? { tool: body.params.name } : {}),
    });
    const token = (req.get('authorization') ?? '').replace(/^Bearer /, '');
    const scopes = TOKENS[token];
    if (!scopes) {
      res.status(401).set('WWW-Authenticate', 'Bearer error="invalid_token"').end();
      return;
    }
    if (
      body.method === 'tools/call' &&
      body.params?.name === 'report' &&
      !scopes.includes('admin')
    ) {
      res
        .status(403)
        .set('WWW-Authenticate', 'Bearer error="insufficient_scope", scope="tasks:read admin"')
        .json({ error: 'insufficient_scope' });
      return;
    }
    // Stateless: a server and transport per request, as the SDK's examples do.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcpServer().connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) =>
    server.once('listening', () => {
      resolve();
    }),
  );
  started.push(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      ),
  );
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/mcp`;
});

function call(tool: string, scope: McpUpstreamCall['scope'] = 'read'): McpUpstreamCall {
  return {
    environmentId: 'env',
    connectionId: 'connection-1',
    action: `scoped.${tool}`,
    app: 'scoped',
    scope,
    input: tool === 'report' ? { period: '2026-11' } : {},
  };
}

function deps(token: string, stepUps: string[], options: { limitBytes?: number } = {}) {
  return {
    findApp: () => Promise.resolve({ id: 'scoped', serverUrl: url }),
    accessToken: () => Promise.resolve({ ok: true as const, accessToken: token }),
    stepUp: (_connectionId: string, scope: string) => {
      const first = !stepUps.includes(scope);
      stepUps.push(scope);
      return Promise.resolve(first);
    },
    timeoutMs: 10_000,
    limitBytes: options.limitBytes ?? 1024 * 1024,
    // The server is on loopback, as MCP_APPS_ALLOW_PRIVATE lets tests have it.
    allowPrivate: true,
  };
}

/** What the caller is answered, as the call workflow settles the outcome. */
function answerOf(outcome: UpstreamOutcome): CallAnswer {
  const preparation = {
    ok: true as const,
    connectedUserId: 'user-1',
    connectionId: 'connection-1',
    decision: 'allow' as const,
    reason: 'test',
    policyId: 'default',
    policyVersion: 1,
    rule: 'defaults.read',
    approval: { requested_from: [], ttl_seconds: 60 },
  };
  return settleOutcome(
    outcome,
    { kind: 'action', action: 'scoped.report', app: 'scoped', scope: 'read', input: {} },
    preparation,
  ).answer;
}

const signal = new AbortController().signal;

describe('a remote MCP tool call, answered', () => {
  it('never reaches a loopback or private address unless MCP_APPS_ALLOW_PRIVATE says so', async () => {
    const before = seen.length;
    await expect(
      mcpToolUpstream({ ...deps('wide', []), allowPrivate: false }, call('report'), signal),
    ).rejects.toMatchObject({ type: 'UpstreamUnreachable', details: [{ sent: false }] });
    expect(seen.length).toBe(before);
  });

  it('a result is {ok: true, data}', async () => {
    const outcome = await mcpToolUpstream(deps('wide', []), call('report'), signal);
    expect(answerOf(outcome)).toEqual({
      kind: 'json',
      status: 200,
      body: { ok: true, data: { content: [{ type: 'text', text: 'report for 2026-11' }] } },
    });
  });

  it('isError: true is {ok: false, data, upstream_status: 200}', async () => {
    const outcome = await mcpToolUpstream(deps('wide', []), call('fails'), signal);
    expect(answerOf(outcome)).toEqual({
      kind: 'json',
      status: 200,
      body: {
        ok: false,
        data: { content: [{ type: 'text', text: 'no such task' }] },
        upstream_status: 200,
      },
    });
  });

  it('an answer over the body limit is payload_too_large, never a Temporal payload', async () => {
    const outcome = await mcpToolUpstream(
      deps('wide', [], { limitBytes: 20_000 }),
      call('big'),
      signal,
    );
    expect(outcome).toMatchObject({ kind: 'too_large', limitBytes: 20_000 });
    expect(answerOf(outcome)).toMatchObject({ kind: 'error', code: 'payload_too_large' });
  });

  it('403 insufficient_scope: the wider scope is recorded for the reconnect, and the caller told to reconnect', async () => {
    const stepUps: string[] = [];
    const before = seen.filter((request) => request.tool === 'report').length;
    const outcome = await mcpToolUpstream(deps('basic', stepUps), call('report'), signal);
    expect(stepUps).toEqual(['tasks:read admin']);
    expect(outcome).toEqual({ kind: 'reauthorize', scope: 'tasks:read admin' });
    expect(answerOf(outcome)).toMatchObject({
      kind: 'error',
      code: 'connection_scope_required',
      extra: { connection_id: 'connection-1', scope: 'tasks:read admin' },
    });
    // Asked once, not again: the step-up is the person's to take.
    expect(seen.filter((request) => request.tool === 'report').length - before).toBe(1);
  });

  it('a scope asked for already and still refused: the server’s 403 stands, no loop', async () => {
    const stepUps = ['tasks:read admin'];
    const outcome = await mcpToolUpstream(deps('basic', stepUps), call('report'), signal);
    expect(outcome).toMatchObject({ kind: 'response', status: 403 });
    expect(answerOf(outcome)).toMatchObject({
      kind: 'json',
      body: { ok: false, upstream_status: 403 },
    });
  });

  it('an operator’s MCP OAuth client refused at refresh: auth_config_required naming the client', async () => {
    const refused = {
      ...deps('wide', []),
      accessToken: () =>
        Promise.resolve({
          ok: false as const,
          status: 'unavailable' as const,
          refusedClient: { mcpOAuthClientId: 'c-1', clientId: 'gatehouse-client' },
        }),
    };
    const outcome = await mcpToolUpstream(refused, call('report'), signal);
    expect(answerOf(outcome)).toMatchObject({
      kind: 'error',
      code: 'auth_config_required',
      extra: { mcp_oauth_client_id: 'c-1' },
    });
  });
});
