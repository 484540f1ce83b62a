import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import {
  startToolsListRewriter,
  type ListedTool,
  type ToolsListRewriter,
} from '../support/tools-list-rewriter.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * A remote server's annotations are its own claims: a destructive tool may say `readOnlyHint:
 * true`. Such a hint grades nothing until an operator has seen the grade it gives (by accepting
 * the snapshot that carries it) or the app was registered trusting the server's annotations.
 */
let stack: CallStack;
let everything: McpServerProcess;
let rewriter: ToolsListRewriter;

/** A tool that acts (it switches the server's logging) claiming to only read. */
const LIAR = 'toggle-simulated-logging';

interface ToolView {
  name: string;
  grade: string;
  grade_source: string;
  callable: boolean;
  refused_because: string | null;
}

let apps = 0;

async function register(
  body: Record<string, unknown> = {},
): Promise<{ id: string; answer: Answer }> {
  apps += 1;
  const id = `graded-${String(apps)}`;
  const answer = await stack.request(stack.key, 'POST', '/v1/mcp-apps', {
    body: { id, name: 'Everything', server_url: rewriter.url, ...body },
  });
  expect(answer.status).toBe(200);
  return { id, answer };
}

function data(answer: Answer) {
  return answer.body.data as {
    snapshot: { accepted_version: number | null; latest_version: number | null };
    tools: ToolView[];
  };
}

function toolOf(answer: Answer, name: string): ToolView {
  const tool = data(answer).tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${JSON.stringify(answer.body)}`);
  return tool;
}

function runLiar(app: string): Promise<Answer> {
  return stack.run(`${app}.${LIAR}`, { user: 'u_grades', input: {} });
}

const lying = (tools: ListedTool[]): ListedTool[] =>
  tools.map((tool) =>
    tool.name === LIAR ? { ...tool, annotations: { readOnlyHint: true } } : tool,
  );

const started = stopsAfterAll();

beforeAll(async () => {
  [stack, everything] = await Promise.all([
    startCallStack().then(started.add),
    startServerEverything().then(started.add),
  ]);
  rewriter = started.add(await startToolsListRewriter(everything.url));
});

describe('grades taken from a server’s own annotations', () => {
  it('decide nothing until an operator accepts the snapshot that shows them', async () => {
    rewriter.rewrite = lying;
    const { id, answer } = await register();
    // Registered, but the first snapshot waits: its hints would make tools reads and writes.
    expect(data(answer).snapshot).toMatchObject({ accepted_version: null, latest_version: 1 });
    expect(toolOf(answer, LIAR)).toMatchObject({
      grade: 'read',
      grade_source: 'annotations',
      callable: false,
    });

    const refused = await runLiar(id);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'denied_by_policy' });
    expect((refused.body.error as { message: string }).message).toContain('accepted');

    // The operator sees each grade and where it came from, then accepts what was shown.
    const accepted = await stack.request(stack.key, 'POST', `/v1/mcp-apps/${id}/accept`, {
      body: { version: 1 },
    });
    expect(accepted.status).toBe(200);
    const [event] = await stack.db.sql<{ response: { grades: Record<string, unknown> } }[]>`
      select response from audit_events
      where action = ${`${id}.*`} and request->>'operation' = 'accept'`;
    expect(event?.response.grades[LIAR]).toEqual({ grade: 'read', source: 'annotations' });

    const ran = await runLiar(id);
    expect(ran.status).toBe(200);
  });

  it('count at once for an app registered trusting the server’s annotations', async () => {
    rewriter.rewrite = lying;
    const { id, answer } = await register({ trust_annotations: true });
    expect(data(answer).snapshot).toMatchObject({ accepted_version: 1, latest_version: 1 });
    expect(toolOf(answer, LIAR)).toMatchObject({ grade: 'read', callable: true });
    const [event] = await stack.db.sql<{ reason: string }[]>`
      select reason from audit_events
      where action = ${`${id}.*`} and request->>'operation' = 'register'`;
    expect(event?.reason).toContain("trusting the server's annotations");
    expect((await runLiar(id)).status).toBe(200);
  });

  it('are not needed when no hint loosens a grade: the registration accepts the snapshot', async () => {
    // No annotations at all: every tool is destructive, the strictest grade, by default.
    rewriter.rewrite = (tools) =>
      tools.map(({ annotations: _dropped, ...tool }) => tool as ListedTool);
    const bare = await register();
    expect(data(bare.answer).snapshot).toMatchObject({ accepted_version: 1 });
    expect(toolOf(bare.answer, LIAR)).toMatchObject({
      grade: 'destructive',
      grade_source: 'default',
      callable: true,
    });
    // Under the default policy a destructive tool is denied: nothing the server said runs it.
    const denied = await runLiar(bare.id);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'denied_by_policy' });

    // The operator's own grade for every hinted tool: nothing is left to the server.
    rewriter.rewrite = lying;
    const listed = await register({ tool_allowlist: [LIAR] });
    const pending = data(listed.answer);
    expect(pending.snapshot.accepted_version).toBeNull();
    const overrides = Object.fromEntries(
      pending.tools
        .filter((tool) => tool.grade_source === 'annotations')
        .map((tool) => [tool.name, 'write']),
    );
    const governed = await register({ grade_overrides: overrides });
    expect(data(governed.answer).snapshot).toMatchObject({ accepted_version: 1 });
    expect(toolOf(governed.answer, LIAR)).toMatchObject({
      grade: 'write',
      grade_source: 'override',
    });
  });
});
