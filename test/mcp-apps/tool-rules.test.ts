import type { DirectoryAction } from '../../activities/apps/directory.js';
import { directoryCall } from '../../api/calls/action-input.js';
import { ApiError } from '../../api/errors.js';
import { describe, expect, it } from '@jest/globals';
import type { McpAppStanding } from '../../activities/db/mcp-apps.js';
import { serverUrlProblem } from '../../activities/mcp-apps/server-url.js';
import { snapshotProblem } from '../../activities/mcp-apps/snapshot-limits.js';
import { toolInputIssues, toolSchemasProblem } from '../../activities/mcp-apps/tool-input.js';
import { pinningRefusal } from '../../activities/mcp-apps/tool-pinning.js';
import { toolStanding } from '../../activities/mcp-apps/tool-standing.js';
import { changesInWords, toolChanges } from '../../workflows/catalog/mcp-tool-changes.js';
import { toolGrade, type McpToolDefinition } from '../../workflows/catalog/mcp-tools.js';

const schema = { type: 'object', properties: { message: { type: 'string' } } };

function tool(name: string, extra: Partial<McpToolDefinition> = {}): McpToolDefinition {
  return { name, description: `${name} it`, inputSchema: schema, ...extra };
}

function standingOf(
  accepted: McpToolDefinition[] | null,
  latest: McpToolDefinition[] | null,
  app: Partial<McpAppStanding['app']> = {},
): McpAppStanding {
  const snapshot = (version: number, tools: McpToolDefinition[]) => ({
    environmentId: 'env',
    appId: 'srv',
    version,
    tools,
    fetchedAt: new Date(),
    fetchedBy: 'ops',
    acceptedAt: null,
    acceptedBy: null,
  });
  const acceptedSnapshot = accepted ? snapshot(1, accepted) : null;
  return {
    app: {
      environmentId: 'env',
      id: 'srv',
      name: 'Server',
      serverUrl: 'https://mcp.example.com/mcp',
      auth: 'none',
      toolAllowlist: null,
      gradeOverrides: {},
      acceptedVersion: accepted ? 1 : null,
      toolsCheckedAt: new Date(),
      protocolVersion: '2025-11-25',
      createdAt: new Date(),
      updatedAt: new Date(),
      updatedBy: 'ops',
      ...app,
    },
    accepted: acceptedSnapshot,
    latest: latest ? snapshot(2, latest) : acceptedSnapshot,
  };
}

describe('toolGrade', () => {
  it('reads the override, then readOnlyHint, then destructiveHint false, else destructive', () => {
    expect(toolGrade(tool('a', { annotations: { readOnlyHint: true } }), {})).toBe('read');
    expect(toolGrade(tool('a', { annotations: { destructiveHint: false } }), {})).toBe('write');
    expect(toolGrade(tool('a'), {})).toBe('destructive');
    expect(toolGrade(tool('a', { annotations: { readOnlyHint: true } }), { a: 'write' })).toBe(
      'write',
    );
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'])(
    'grades a tool named %s by its annotations, never by an Object member',
    (name) => {
      expect(toolGrade(tool(name, { annotations: { readOnlyHint: true } }), {})).toBe('read');
    },
  );
});

describe('toolChanges', () => {
  it('names added, removed and changed tools with the fields that changed, whatever the key order', () => {
    const before = [
      tool('same', { inputSchema: { type: 'object', properties: { a: { type: 'string' } } } }),
      tool('gone'),
      tool('edited', { annotations: { readOnlyHint: true } }),
    ];
    const after = [
      tool('same', { inputSchema: { properties: { a: { type: 'string' } }, type: 'object' } }),
      tool('edited', { annotations: { readOnlyHint: false }, title: 'Edited' }),
      tool('new'),
    ];
    const changes = toolChanges(before, after);
    expect(changes).toEqual({
      added: ['new'],
      removed: ['gone'],
      changed: [{ tool: 'edited', fields: ['title', 'annotations'] }],
    });
    expect(changesInWords(changes)).toBe(
      'added new; removed gone; changed edited (title, annotations)',
    );
    expect(toolChanges(null, after).added).toEqual(['same', 'edited', 'new']);
  });
});

describe('toolStanding and pinningRefusal', () => {
  const call = (
    name: string,
    input: unknown = {},
    scope: 'read' | 'write' | 'destructive' = 'destructive',
  ) => ({
    kind: 'action' as const,
    action: `srv.${name}`,
    app: 'srv',
    scope,
    input,
  });

  it('lets an accepted, unchanged tool be called with its accepted definition', async () => {
    const standing = standingOf([tool('echo')], null);
    expect(toolStanding(standing, 'echo')).toMatchObject({ callable: true, accepted: true });
    expect(await pinningRefusal(standing, call('echo', { message: 'hi' }))).toBeNull();
  });

  it('refuses a changed, removed, new or disallowed tool, naming why', async () => {
    const standing = standingOf(
      [tool('echo'), tool('gone'), tool('kept')],
      [tool('echo', { description: 'changed' }), tool('kept'), tool('new')],
      { toolAllowlist: ['echo', 'gone', 'new'] },
    );
    expect(await pinningRefusal(standing, call('echo'))).toContain('changed its description');
    expect(await pinningRefusal(standing, call('gone'))).toContain('removed by the server');
    expect(await pinningRefusal(standing, call('new'))).toContain('new in snapshot v2');
    expect(await pinningRefusal(standing, call('kept'))).toContain('allow-list');
    expect(toolStanding(standing, 'nothing')).toBeNull();
    expect(await pinningRefusal(standing, call('nothing'))).toContain('no snapshot');
  });

  it('refuses every tool of an app with no accepted snapshot, and of an app that is gone', async () => {
    const standing = standingOf(null, [tool('echo')]);
    expect(await pinningRefusal(standing, call('echo'))).toContain('no operator has accepted');
    expect(await pinningRefusal(null, call('echo'))).toContain('not registered');
  });

  it('refuses a call graded otherwise than the tool is now, and input the accepted schema no longer takes', async () => {
    const standing = standingOf([tool('echo', { annotations: { readOnlyHint: true } })], null);
    expect(await pinningRefusal(standing, call('echo', {}, 'write'))).toContain('graded read now');
    expect(await pinningRefusal(standing, call('echo', { message: 3 }, 'read'))).toContain(
      'input.message',
    );
  });
});

describe('toolInputIssues', () => {
  it('checks each JSON Schema dialect a tool may declare, naming each field', async () => {
    const properties = { a: { type: 'number' } };
    for (const $schema of [
      'http://json-schema.org/draft-07/schema#',
      'https://json-schema.org/draft/2019-09/schema',
      'https://json-schema.org/draft/2020-12/schema',
      undefined,
    ]) {
      const withDialect = {
        ...($schema ? { $schema } : {}),
        type: 'object',
        properties,
        required: ['a'],
        additionalProperties: false,
      };
      expect(
        (await toolInputIssues(withDialect, { b: 1 })).map((issue) => issue.path).sort(),
      ).toEqual(['input.a', 'input.b']);
      expect(await toolInputIssues(withDialect, { a: 1 })).toEqual([]);
    }
  });
});

describe('toolInputIssues against a hostile pattern', () => {
  it('refuses input whose check outlasts its budget instead of holding the event loop', async () => {
    // A schema an operator accepted may hold a pattern that backtracks exponentially; an agent
    // chooses the input. Unbounded, this check took ~10 s of the API's only thread.
    const schema = {
      type: 'object',
      properties: { q: { type: 'string', pattern: '^(a+)+$' } },
    };
    expect(await toolInputIssues(schema, { q: `${'a'.repeat(28)}!` })).toEqual([
      { path: 'input', message: expect.stringContaining('took longer than') },
    ]);
    // An input the pattern matches, or refuses quickly, is judged as before.
    expect(await toolInputIssues(schema, { q: 'aaaa' })).toEqual([]);
    expect(await toolInputIssues(schema, { q: 'b' })).toEqual([
      { path: 'input.q', message: expect.stringContaining('pattern') },
    ]);
  });
});

describe('directoryCall of a tool whose accepted schema no longer compiles', () => {
  it('answers 409 conflict, not a 500', async () => {
    // Accepted before $async schemas were refused: only what directoryCall reads is filled in.
    const action = {
      kind: 'mcp',
      id: 'legacy.search',
      app: 'legacy',
      name: 'search',
      scope: 'read',
      tool: { name: 'search', inputSchema: { $async: true, type: 'object' } },
      callable: { accepted: true },
    } as unknown as DirectoryAction;
    let thrown: unknown;
    try {
      await directoryCall(action, { q: 'x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).toEnvelope()).toMatchObject({
      error: { code: 'conflict', message: expect.stringContaining('asynchronous') },
    });
  });
});

describe('snapshotProblem', () => {
  it('refuses what a snapshot may not hold, whole', () => {
    expect(snapshotProblem([tool('ok')])).toBeNull();
    expect(snapshotProblem(Array.from({ length: 501 }, (_, i) => tool(`t${String(i)}`)))).toContain(
      'more than 500',
    );
    expect(snapshotProblem([tool('a'.repeat(129))])).toContain('tool names');
    expect(snapshotProblem([tool('ok'), tool('ok')])).toContain('twice');
    expect(snapshotProblem([tool('big', { description: 'x'.repeat(70_000) })])).toContain(
      '65536 bytes',
    );
    expect(snapshotProblem([tool('nul', { description: 'a\u0000b' })])).toContain('NUL');
    expect(snapshotProblem([tool('lone', { title: '\ud83d' })])).toContain('malformed Unicode');
  });
});

describe('toolSchemasProblem', () => {
  it('refuses an input schema that cannot check input, naming the tool', async () => {
    expect(await toolSchemasProblem([tool('ok')])).toBeNull();
    expect(
      await toolSchemasProblem([tool('ok'), tool('bad', { inputSchema: { type: 'objec' } })]),
    ).toContain('the tool "bad" an input schema');
    expect(
      await toolSchemasProblem([
        tool('dialect', { inputSchema: { $schema: 'https://example.com/s', type: 'object' } }),
      ]),
    ).toContain('dialect');
    // A validator of an $async schema answers a promise, which would pass any input.
    expect(
      await toolSchemasProblem([tool('async', { inputSchema: { $async: true, type: 'object' } })]),
    ).toContain('asynchronous');
  });
});

describe('serverUrlProblem', () => {
  it.each([
    ['https://10.0.0.1/mcp', 'private'],
    ['https://[::1]/mcp', 'loopback'],
    ['https://localhost/mcp', 'loopback'],
    ['http://example.com/mcp', 'https'],
    ['https://u:p@example.com/mcp', 'credentials'],
  ])('refuses %s without MCP_APPS_ALLOW_PRIVATE (%s)', async (url) => {
    expect(await serverUrlProblem(url, false)).not.toBeNull();
  });

  it('allows http only on loopback, and only with MCP_APPS_ALLOW_PRIVATE', async () => {
    expect(await serverUrlProblem('http://127.0.0.1:3001/mcp', true)).toBeNull();
    expect(await serverUrlProblem('http://localhost:3001/mcp', true)).toBeNull();
    expect(await serverUrlProblem('http://10.0.0.1/mcp', true)).toContain('https');
    expect(await serverUrlProblem('http://127.0.0.1:3001/mcp', false)).toContain('https');
  });
});
