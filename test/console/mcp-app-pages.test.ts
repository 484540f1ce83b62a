// The console's remote MCP apps: an operator reviews what a server changed in its tools, side by
// side, and accepts it through the registry's own path; the tool is then called as the new
// snapshot defines it. Real server (server-everything, behind a proxy that rewrites its
// tools/list), real sign-in (the dev provider), real Chromium.
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { startServerEverything, type McpServerProcess } from '../../infra/dev/server-everything.js';
import type { CookieJar } from '../../infra/demo-app/cookie-jar.js';
import { startConsoleStack, type ConsoleStack } from '../support/console-stack.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  startToolsListRewriter,
  type ListedTool,
  type ToolsListRewriter,
} from '../support/tools-list-rewriter.js';
import {
  DESKTOP,
  PHONE,
  formTokenOf,
  hiddenFieldsOf,
  overflowOf,
  pageAs,
  photograph,
  postAs,
  screenshotsFolder,
} from './page-forms.js';

let world: ConsoleStack;
let everything: McpServerProcess;
let rewriter: ToolsListRewriter;
/** Olivia (operators: operator and admin) at a desktop width, signed in once for the file. */
let olivia: { context: BrowserContext; page: Page };
let oliviaJar: CookieJar;
/** Alice (approvers: approver only). */
let aliceJar: CookieJar;

const USER = 'u_apps';
const NEW_DESCRIPTION = 'Echoes a message of at most ten characters back, and keeps a copy';

const started = stopsAfterAll();

beforeAll(async () => {
  [world, everything] = await Promise.all([
    startConsoleStack().then(started.add),
    startServerEverything().then(started.add),
  ]);
  rewriter = started.add(await startToolsListRewriter(everything.url));
  await screenshotsFolder();
  olivia = await world.signedInContext('olivia@example.com', DESKTOP);
  started.push(() => olivia.context.close());
  oliviaJar = await world.signIn('olivia@example.com');
  aliceJar = await world.signIn('alice@example.com');
}, 600_000);

let apps = 0;

/** Registers server-everything (through the rewriter) as a fresh app, trusting its annotations. */
async function registerEverything(): Promise<string> {
  apps += 1;
  const id = `everything-${String(apps)}`;
  const answer = await world.stack.request(world.stack.key, 'POST', '/v1/mcp-apps', {
    body: { id, name: 'Everything', server_url: rewriter.url, trust_annotations: true },
  });
  if (answer.status !== 200) throw new Error(`registering failed: ${JSON.stringify(answer.body)}`);
  return id;
}

/** `echo` as the server lists it from now on: a new description, and messages of ten at most. */
function shorterEcho(tools: ListedTool[]): ListedTool[] {
  return tools.map((tool) => {
    if (tool.name !== 'echo') return tool;
    const schema = tool.inputSchema as { properties: { message: Record<string, unknown> } };
    return {
      ...tool,
      description: NEW_DESCRIPTION,
      inputSchema: {
        ...schema,
        properties: {
          ...schema.properties,
          message: { ...schema.properties.message, maxLength: 10 },
        },
      },
    };
  });
}

/** An app whose server changed `echo` since the accepted snapshot v1: v2 waits for review. */
async function appWithChangedEcho(): Promise<string> {
  const app = await registerEverything();
  rewriter.rewrite = shorterEcho;
  try {
    const refreshed = await world.stack.request(
      world.stack.key,
      'POST',
      `/v1/mcp-apps/${app}/refresh`,
    );
    expect(refreshed.status).toBe(200);
  } finally {
    rewriter.rewrite = null;
  }
  return app;
}

async function snapshotOf(app: string) {
  const shown = await world.stack.request(world.stack.key, 'GET', `/v1/mcp-apps/${app}`);
  return (shown.body.data as { snapshot: { accepted_version: number; pending: unknown } }).snapshot;
}

const echo = (app: string, message: string) =>
  world.stack.run(`${app}.echo`, { user: USER, input: { message } });

describe('a changed remote tool, reviewed and accepted in the console', () => {
  it('shows the accepted and the pending definition side by side with the changed fields marked, and accepting lets agents call the tool as newly defined', async () => {
    const app = await appWithChangedEcho();
    // The pinning refuses the changed tool until someone accepts it.
    const refused = await echo(app, 'hi');
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('changed its description, input schema');

    const { page } = olivia;
    await page.goto(`${world.base}/apps`);
    const row = page.getByRole('row').filter({ hasText: app });
    await expect(row.textContent()).resolves.toContain('v2 to review');
    await photograph(page, 'apps');
    await row.getByRole('link', { name: 'Everything' }).click();

    await expect(
      page.getByRole('heading', { name: 'Snapshot v2 waits for review' }).count(),
    ).resolves.toBe(1);
    const review = page.getByRole('region', { name: /echo/ });
    await expect(review.getByRole('heading', { level: 3 }).textContent()).resolves.toContain(
      'changed',
    );
    // Each field that changed is marked, each side labelled; the unchanged ones fold away.
    for (const field of ['Description', 'Input schema']) {
      await expect(
        review.getByRole('heading', { level: 4, name: `${field} changed` }).count(),
      ).resolves.toBe(1);
    }
    await expect(review.locator('details summary').allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringMatching(/Annotations\s+unchanged/)]),
    );
    const removed = await review
      .locator('pre[aria-label="Description, Accepted v1"] del')
      .allTextContents();
    const added = await review
      .locator('pre[aria-label="Description, Pending v2"] ins')
      .allTextContents();
    expect(removed.join('')).toMatch(/^− .+/);
    expect(added.join('')).toBe(`+ ${NEW_DESCRIPTION}`);
    await expect(
      review.locator('pre[aria-label="Input schema, Pending v2"] ins').allTextContents(),
    ).resolves.toContainEqual(expect.stringContaining('"maxLength": 10'));
    // Its annotations did not change: their grade was seen when v1 was accepted.
    await expect(page.getByText('Grades the server gives itself').count()).resolves.toBe(0);
    expect(await overflowOf(page)).toBe(0);
    await photograph(page, 'app-review');

    await page.getByRole('button', { name: 'Accept snapshot v2' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'Snapshot v2 is accepted',
    );
    await expect(page.getByRole('heading', { name: /waits for review/ }).count()).resolves.toBe(0);
    expect(await snapshotOf(app)).toMatchObject({ accepted_version: 2, pending: null });

    // The tool runs again, under its new definition: a message of ten fits, eleven does not.
    const ran = await echo(app, 'ten chars!');
    expect(ran.status).toBe(200);
    expect(JSON.stringify(ran.body)).toContain('ten chars!');
    const tooLong = await echo(app, 'eleven char');
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('message');

    // The registry's own event names the person and the console; the console's names the app.
    const events = await world.stack.db.sql<
      { action: string; agentId: string; via: string; request: Record<string, unknown> }[]
    >`
      select action, agent_id, via, request from audit_events
      where action in (${`${app}.*`}, 'console.apps.accept') order by seq`;
    const accepted = events.filter((event) => event.request.operation === 'accept');
    expect(accepted).toEqual([
      expect.objectContaining({
        agentId: 'person:olivia@example.com',
        request: expect.objectContaining({ channel: 'console', version: 2 }),
      }),
    ]);
    expect(events.filter((event) => event.action === 'console.apps.accept')).toEqual([
      expect.objectContaining({
        agentId: 'person:olivia@example.com',
        via: 'console',
        request: expect.objectContaining({
          app,
          version: 2,
          person: expect.objectContaining({ email: 'olivia@example.com', subject: 'dev-olivia' }),
        }),
      }),
    ]);
  });

  it('reads at a phone width without sideways scrolling', async () => {
    const app = await appWithChangedEcho();
    const phone = await world.signedInContext('olivia@example.com', PHONE);
    try {
      for (const [path, name] of [
        ['/apps', 'apps'],
        [`/apps/${app}`, 'app-review'],
      ] as const) {
        await phone.page.goto(`${world.base}${path}`);
        expect(await overflowOf(phone.page)).toBe(0);
        await photograph(phone.page, name);
      }
    } finally {
      await phone.context.close();
    }
  });
});

describe('a first snapshot graded by the server’s own annotations', () => {
  it('waits for review with the grades the annotations give named, and accepting it makes the tools callable', async () => {
    apps += 1;
    const app = `everything-${String(apps)}`;
    const registered = await world.stack.request(world.stack.key, 'POST', '/v1/mcp-apps', {
      body: { id: app, name: 'Everything, hints unread', server_url: everything.url },
    });
    expect(registered.status).toBe(200);
    expect(await snapshotOf(app)).toMatchObject({
      accepted_version: null,
      pending: { version: 1 },
    });

    const shown = await pageAs(world, oliviaJar, `/apps/${app}`);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('Snapshot v1 waits for review');
    expect(shown.html).toContain('Grades the server gives itself');
    expect(shown.html).toMatch(/echo \(read\)/);
    expect(shown.html).toContain('Accept snapshot v1');
    expect((await echo(app, 'hi')).status).toBe(403);

    const accepted = await postAs(world, oliviaJar, `/apps/${app}/accept`, {
      ...hiddenFieldsOf(shown.html, `/apps/${app}/accept`),
    });
    expect(accepted.status).toBe(303);
    expect(accepted.location).toBe(`${world.base}/apps/${app}?accepted=1`);
    expect(await snapshotOf(app)).toMatchObject({ accepted_version: 1, pending: null });
    expect((await echo(app, 'hi')).status).toBe(200);
  });
});

describe('who may accept', () => {
  it('shows an approver the review without the button, and refuses their accept (403)', async () => {
    const app = await appWithChangedEcho();
    const shown = await pageAs(world, aliceJar, `/apps/${app}`);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('Snapshot v2 waits for review');
    expect(shown.html).not.toContain('Accept snapshot v2');
    const posted = await postAs(world, aliceJar, `/apps/${app}/accept`, {
      csrf: formTokenOf(shown.html),
      version: '2',
    });
    expect(posted.status).toBe(403);
    expect(await snapshotOf(app)).toMatchObject({ accepted_version: 1, pending: { version: 2 } });
  });

  it('refuses an accept without the form token, or with another session’s, and accepts none unseen', async () => {
    const app = await appWithChangedEcho();
    const withoutToken = await postAs(world, oliviaJar, `/apps/${app}/accept`, { version: '2' });
    expect(withoutToken.status).toBe(403);
    expect(withoutToken.html).toContain('That form was not sent from this console');
    const alicesToken = formTokenOf((await pageAs(world, aliceJar, '/apps')).html);
    const foreign = await postAs(world, oliviaJar, `/apps/${app}/accept`, {
      csrf: alicesToken,
      version: '2',
    });
    expect(foreign.status).toBe(403);
    const csrf = formTokenOf((await pageAs(world, oliviaJar, '/apps')).html);
    const unknown = await postAs(world, oliviaJar, `/apps/${app}/accept`, { csrf, version: '9' });
    expect(unknown.status).toBe(404);
    expect(await snapshotOf(app)).toMatchObject({ accepted_version: 1, pending: { version: 2 } });
    const events = await world.stack.db.sql`
      select 1 from audit_events
      where action = 'console.apps.accept' and request ->> 'app' = ${app}`;
    expect(events).toHaveLength(0);
  });
});

/** A notes API: `get_note` moves to another path in `moved`. */
function notesDocument(moved: boolean) {
  return {
    openapi: '3.1.0',
    info: { title: 'Notes', version: moved ? '2' : '1' },
    paths: {
      [moved ? '/v2/notes/{id}' : '/notes/{id}']: {
        get: {
          operationId: 'getNote',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/notes': {
        get: { operationId: 'listNotes', responses: { '200': { description: 'ok' } } },
      },
    },
  };
}

describe('a changed OpenAPI operation, reviewed and accepted in the console', () => {
  it('lists the app beside the MCP apps, shows the moved path side by side, and accepting makes it callable as now described', async () => {
    const app = 'notes-api';
    const base = '/v1/openapi-apps';
    const registered = await world.stack.request(world.stack.key, 'POST', base, {
      body: {
        id: app,
        name: 'Notes',
        document: notesDocument(false),
        base_url: 'http://127.0.0.1:9/api',
      },
    });
    expect(registered.status).toBe(200);
    const refreshed = await world.stack.request(world.stack.key, 'POST', `${base}/${app}/refresh`, {
      body: { document: notesDocument(true) },
    });
    expect(refreshed.status).toBe(200);
    const pending = await world.stack.request(world.stack.key, 'GET', `${base}/${app}`);
    expect(pending.body.data).toMatchObject({
      operations: expect.arrayContaining([
        expect.objectContaining({ name: 'get_note', path: '/notes/{id}', callable: false }),
      ]),
    });

    const list = await pageAs(world, oliviaJar, '/apps');
    expect(list.html).toContain('REST APIs (OpenAPI)');
    expect(list.html).toMatch(new RegExp(`href="[^"]*/apps/${app}#pending"\\s*>v2 to review`));

    const { page } = olivia;
    await page.goto(`${world.base}/apps/${app}`);
    await expect(
      page.getByRole('heading', { name: 'Snapshot v2 waits for review' }).count(),
    ).resolves.toBe(1);
    const review = page.getByRole('region', { name: /get_note/ });
    await expect(
      review.getByRole('heading', { level: 4, name: 'Path changed' }).count(),
    ).resolves.toBe(1);
    await expect(
      review.locator('pre[aria-label="Path, Accepted v1"] del').allTextContents(),
    ).resolves.toEqual(['− /notes/{id}']);
    await expect(
      review.locator('pre[aria-label="Path, Pending v2"] ins').allTextContents(),
    ).resolves.toEqual(['+ /v2/notes/{id}']);
    expect(await overflowOf(page)).toBe(0);
    await photograph(page, 'openapi-app-review');

    // An approver sees the review, not the button, and cannot accept.
    const shownToAlice = await pageAs(world, aliceJar, `/apps/${app}`);
    expect(shownToAlice.html).toContain('Snapshot v2 waits for review');
    expect(shownToAlice.html).not.toContain('Accept snapshot v2');
    const byAlice = await postAs(world, aliceJar, `/apps/${app}/accept`, {
      csrf: formTokenOf(shownToAlice.html),
      version: '2',
    });
    expect(byAlice.status).toBe(403);

    await page.getByRole('button', { name: 'Accept snapshot v2' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'Snapshot v2 is accepted',
    );
    const shown = await world.stack.request(world.stack.key, 'GET', `${base}/${app}`);
    expect(shown.body.data).toMatchObject({
      snapshot: { accepted_version: 2, pending: null },
      operations: expect.arrayContaining([
        expect.objectContaining({ name: 'get_note', path: '/v2/notes/{id}', callable: true }),
      ]),
    });
    const events = await world.stack.db.sql<{ action: string; agentId: string }[]>`
      select action, agent_id from audit_events
      where (action = ${`${app}.*`} and request ->> 'operation' = 'accept')
        or (action = 'console.apps.accept' and request ->> 'app' = ${app})
      order by seq`;
    expect(events).toEqual([
      { action: `${app}.*`, agentId: 'person:olivia@example.com' },
      { action: 'console.apps.accept', agentId: 'person:olivia@example.com' },
    ]);
  });
});
