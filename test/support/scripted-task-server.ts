import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the scripted server answers one request: a JSON-RPC `result` as raw JSON text, a
 * JSON-RPC `error`, or an HTTP status with no JSON-RPC answer at all.
 */
export type Scripted =
  { result: string } | { error: { code: number; message: string } } | { status: number };

/**
 * A remote MCP server written by hand that says it runs tools as tasks and then answers the task
 * methods as the test scripts them, so it can answer what no SDK server would: a malformed
 * CreateTaskResult, `working` for ever, another task's status, an answer over the body limit.
 * `initialize` answers with the tasks capability and a session id; `tools/list` lists one tool,
 * `job` (a write, `execution.taskSupport: required`); a notification gets 202. Each task method
 * is answered by its script, given how many times it was asked before (0 for the first) since
 * the test last emptied `received`.
 */
export interface ScriptedTaskServer {
  url: string;
  toolsCall: (n: number) => Scripted;
  tasksGet: (n: number) => Scripted;
  tasksResult: (n: number) => Scripted;
  tasksCancel: (n: number) => Scripted;
  /** Every JSON-RPC method received, in order. */
  received: string[];
  count(method: string): number;
  close(): Promise<void>;
}

/** A task as `tasks/get` or CreateTaskResult carries it, as JSON text. */
export function taskJson(
  status: string,
  fields: {
    taskId?: string;
    ttl?: number | null;
    pollInterval?: number;
    statusMessage?: string;
  } = {},
): string {
  const now = new Date().toISOString();
  return JSON.stringify({
    taskId: fields.taskId ?? 'task-1',
    status,
    ttl: fields.ttl === undefined ? 60_000 : fields.ttl,
    createdAt: now,
    lastUpdatedAt: now,
    pollInterval: fields.pollInterval ?? 100,
    ...(fields.statusMessage === undefined ? {} : { statusMessage: fields.statusMessage }),
  });
}

export async function startScriptedTaskServer(): Promise<ScriptedTaskServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: { protocolVersion?: string };
      };
      const n = state.count(message.method);
      state.received.push(message.method);
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      let answer: Scripted;
      switch (message.method) {
        case 'initialize':
          answer = {
            result: JSON.stringify({
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
              serverInfo: { name: 'scripted', version: '1.0.0' },
            }),
          };
          break;
        case 'tools/list':
          answer = {
            result: JSON.stringify({
              tools: [
                {
                  name: 'job',
                  inputSchema: { type: 'object' },
                  annotations: { readOnlyHint: false, destructiveHint: false },
                  execution: { taskSupport: 'required' },
                },
              ],
            }),
          };
          break;
        case 'tools/call':
          answer = state.toolsCall(n);
          break;
        case 'tasks/get':
          answer = state.tasksGet(n);
          break;
        case 'tasks/result':
          answer = state.tasksResult(n);
          break;
        case 'tasks/cancel':
          answer = state.tasksCancel(n);
          break;
        default:
          answer = { error: { code: -32601, message: 'Method not found' } };
      }
      if ('status' in answer) {
        res.writeHead(answer.status).end();
        return;
      }
      const id = JSON.stringify(message.id);
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
      res.end(
        'result' in answer
          ? `{"jsonrpc":"2.0","id":${id},"result":${answer.result}}`
          : JSON.stringify({ jsonrpc: '2.0', id: message.id, error: answer.error }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const state: ScriptedTaskServer = {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/mcp`,
    toolsCall: () => ({ result: `{"task":${taskJson('working')}}` }),
    tasksGet: () => ({ result: taskJson('working') }),
    tasksResult: () => ({ result: '{"content":[{"type":"text","text":"done"}]}' }),
    tasksCancel: () => ({ result: taskJson('cancelled') }),
    received: [],
    count: (method) => state.received.filter((each) => each === method).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
  return state;
}
