import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { callToolAsTask } from './tasks/task-creation.js';
import { taskResultHandler } from './tasks/task-result.js';
import { McpTaskStore } from './tasks/task-store.js';
import { callTool, type ToolCallContext } from './tool-call.js';
import { availableTools, toolPage } from './tools.js';

function instructions(ctx: ToolCallContext): string {
  const { principal } = ctx;
  return [
    `These tools act for the user "${principal.userExternalId}" on the apps they connected, through Gatehouse, as agent "${principal.caller.agentId}".`,
    'Every call is checked against a policy: it runs, is held for a person’s approval, or is denied; every call is audited.',
    'A held call answers at once with an approval id and does not run: once a person approves it, call the same tool with exactly the same arguments, and it runs once.',
    'Clients that speak MCP tasks may call any tool as a task instead: a held call is then a task that ends with the app’s answer once a person approves it (or with the reason it did not run).',
  ].join(' ');
}

/**
 * One MCP server per HTTP request (stateless Streamable HTTP): everything it knows comes with the
 * request (the principal, the client's signed session id), so any API process serves any request.
 */
export function mcpServer(ctx: ToolCallContext): McpServer {
  const taskStore = new McpTaskStore(ctx.deps, ctx.principal);
  const mcp = new McpServer(
    { name: 'gatehouse', title: 'Gatehouse', version: '1.0.0' },
    {
      capabilities: {
        // The tool list depends on the user's connections and the policy; clients list again
        // when they reconnect, so no change notifications (a stateless server has no stream).
        tools: { listChanged: false },
        // A held call is a task (MCP 2025-11-25): the SDK's handlers answer tasks/get, list and
        // cancel from `taskStore`; tasks/result is bounded (below).
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      instructions: instructions(ctx),
    },
  );
  // Tools are the catalog's, listed per user and policy: the protocol-level handlers, not
  // McpServer's registry of fixed tools.
  const { server } = mcp;
  server.onerror = (error) => {
    ctx.req.log.debug({ err: error }, 'MCP protocol error');
  };
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const tools = await availableTools(ctx.deps.sql, ctx.principal);
    return toolPage(tools, request.params?.cursor, ctx.deps.config.mcp.toolsPageSize);
  });
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    request.params.task
      ? callToolAsTask(ctx, request.params.name, request.params.arguments, extra)
      : callTool(ctx, request.params.name, request.params.arguments, extra),
  );
  server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    taskResultHandler(ctx, taskStore, ctx.taskWaiters),
  );
  return mcp;
}
