import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { chromium, type Browser } from 'playwright-core';
import { walkConnectLink } from '../../infra/demo-app/scripted-connect.js';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import {
  devDataFolder,
  spawnDev,
  stopDev,
  untilReady,
  type DevProcess,
} from '../support/dev-process.js';
import { storedPayloads } from '../support/workflow-history.js';

/**
 * In `gatehouse dev`, payloads are read in the Temporal UI after one step, the
 * banner's "UI sign-in" link, and every refusal on the way leads there. Against the real stack:
 * the Temporal CLI's own UI (version 2.54), the API's codec endpoint, headless Chromium.
 */
const TITLE = `Ship the report ${randomBytes(4).toString('hex')}`;
const USER = 'u_ui_codec';

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

let dataDir: string;
let dev: DevProcess;
let browser: Browser | undefined;
let ui: string;
let api: string;
let signIn: string;
let workflow: { id: string; runId: string };
/** The call's payloads as Temporal keeps them, in the protobuf JSON the UI posts. */
let sealed: JsonPayload[];

async function json(
  method: string,
  url: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A codec request as the UI sends it: to its own origin, cookies only if it has some. */
async function decode(
  payloads: JsonPayload[],
  headers: Record<string, string> = {},
  at = ui,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${at}/codec/decode?preserveStorageRefs=true`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-namespace': 'default',
      origin: ui,
      ...headers,
    },
    body: JSON.stringify({ payloads }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const messageOf = (answer: { body: Record<string, unknown> }) =>
  (answer.body.error as { message: string }).message;

beforeAll(async () => {
  ({ dir: dataDir } = await devDataFolder('gatehouse-dev-ui-'));
  dev = spawnDev({ dataDir });
  await untilReady(dev);
  ui = dev.field('Temporal UI');
  api = dev.field('API');
  signIn = dev.field('UI sign-in');
  const agentKey = dev.field('Agent key');

  // A call held for approval: its input, with the title, is sealed in Temporal.
  const link = await json('POST', `${api}/v1/connect/links`, agentKey, { user: USER, app: 'acme' });
  expect((await walkConnectLink(String(link.body.url), { username: USER })).status).toBe(200);
  const held = await json('POST', `${api}/v1/actions/acme.create_task/run`, agentKey, {
    user: USER,
    input: { title: TITLE },
  });
  expect(held.status).toBe(403);

  const connection = await Connection.connect({ address: dev.field('Temporal') });
  try {
    const client = new Client({ connection });
    // Visibility follows the start by a moment: asked again until the call is listed.
    for (let found = false; !found;) {
      for await (const execution of client.workflow.list({
        query: `WorkflowType = 'governedCall' AND GatehouseUser = '${USER}'`,
      })) {
        workflow = { id: execution.workflowId, runId: execution.runId };
        found = true;
      }
      if (!found) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    sealed = (await storedPayloads(client, workflow.id)).map((payload) => ({
      metadata: Object.fromEntries(
        Object.entries(payload.metadata ?? {}).map(([name, value]) => [
          name,
          Buffer.from(value).toString('base64'),
        ]),
      ),
      data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
    }));
  } finally {
    await connection.close();
  }
  const stored = sealed.map((payload) => Buffer.from(payload.data, 'base64').toString('utf8'));
  expect(stored.join('\n')).not.toContain(TITLE);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stopDev(dev);
  await rm(dataDir, { recursive: true, force: true });
});

describe('reading payloads in the Temporal UI of gatehouse dev', () => {
  it('takes one step, the banner link, and every refusal on the way leads there', async () => {
    expect(signIn).toMatch(new RegExp(`^${ui}/codec/sign-in/[\\w-]{32}$`));
    expect(dev.output()).toMatch(
      / {2}UI sign-in {4}\S+ {3}\(opens the Temporal UI with call inputs/,
    );

    // The UI's codec endpoint is on its own origin; its red banner leads to the sign-in page.
    const settings = (await (await fetch(`${ui}/api/v1/settings`)).json()) as {
      Codec: Record<string, unknown>;
    };
    expect(settings.Codec).toMatchObject({
      Endpoint: `${ui}/codec`,
      DefaultErrorLink: `${ui}/codec/session`,
    });
    expect(settings.Codec.DefaultErrorMessage).toContain('"UI sign-in" link');
    expect(JSON.stringify(settings)).not.toContain(signIn.split('/').pop());

    // Before the step: refused, and told where to go, at the UI's origin and at the API's.
    const anonymous = await decode(sealed);
    expect(anonymous.status).toBe(401);
    expect(messageOf(anonymous)).toContain(`sign in at ${ui}/codec/session.`);
    expect(messageOf(anonymous)).toContain('the "UI sign-in" link its banner prints');
    const direct = await decode(sealed, {}, api);
    expect(direct.status).toBe(401);
    expect(messageOf(direct)).toContain(`sign in at ${api}/codec/session.`);
    const standard = await decode(sealed, { authorization: `Bearer ${dev.field('Agent key')}` });
    expect(standard.status).toBe(403);
    expect(messageOf(standard)).toContain(`sign in with one at ${ui}/codec/session.`);
    const page = await (await fetch(`${ui}/codec/session`)).text();
    expect(page).toContain('open the “UI sign-in” link its banner');

    // A link of another start, or mistyped, leads to the sign-in page and signs nobody in.
    const wrong = await fetch(`${ui}/codec/sign-in/${'x'.repeat(32)}`, { redirect: 'manual' });
    expect(wrong.status).toBe(303);
    expect(wrong.headers.get('location')).toBe('/codec/session');
    expect(wrong.headers.get('set-cookie')).toBeNull();

    // The step: the link signs the browser in and opens the UI.
    const step = await fetch(signIn, { redirect: 'manual' });
    expect(step.status).toBe(303);
    expect(step.headers.get('location')).toBe('/namespaces/default/workflows');
    const setCookie = step.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^gatehouse_codec=v1\./);
    expect(setCookie).toContain('Path=/codec');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    const cookie = setCookie.split(';')[0] ?? '';

    // After it: the UI's own requests (same origin, no "include credentials") open the call.
    const opened = await decode(sealed, { cookie });
    expect(opened.status).toBe(200);
    const plain = (opened.body.payloads as JsonPayload[])
      .map((payload) => Buffer.from(payload.data, 'base64').toString('utf8'))
      .join('\n');
    expect(plain).toContain(TITLE);
    const signedIn = await (await fetch(`${ui}/codec/session`, { headers: { cookie } })).text();
    expect(signedIn).toContain('reads payloads through its own address');
    expect(signedIn).toContain(`href="${ui}"`);

    // What opens for nobody still says where payloads do open.
    const encoded = await json('POST', `${api}/codec/encode`, dev.field('Admin key'), {
      payloads: [
        { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: 'e30=' },
      ],
    });
    expect(encoded.status).toBe(200);
    const nobodys = await decode(encoded.body.payloads as JsonPayload[], { cookie });
    expect(nobodys.status).toBe(404);
    expect(messageOf(nobodys)).toContain(
      `sign in at ${ui}/codec/session with a full key of its environment.`,
    );
  });

  it('shows a call decoded in the real Temporal UI once the link is opened, and the way there before', async () => {
    browser = await chromium.launch({
      executablePath: await ensureChromium(),
      args: CHROMIUM_ARGS,
    });
    const callPage = `${ui}/namespaces/default/workflows/${encodeURIComponent(workflow.id)}/${workflow.runId}/history`;
    const banner = 'Gatehouse seals payloads';

    const before = await (await browser.newContext()).newPage();
    await before.goto(callPage);
    await before.getByText(banner).waitFor({ timeout: 90_000 });
    expect(await before.locator(`a[href="${ui}/codec/session"]`).count()).toBeGreaterThan(0);
    expect(await before.getByText(TITLE).count()).toBe(0);

    const after = await (await browser.newContext()).newPage();
    await after.goto(signIn);
    expect(after.url()).toBe(`${ui}/namespaces/default/workflows`);
    await after.goto(callPage);
    await after.getByText(TITLE).first().waitFor({ timeout: 90_000 });
    expect(await after.getByText(banner).count()).toBe(0);
  }, 240_000);
});
