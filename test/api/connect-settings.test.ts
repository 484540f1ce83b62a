import { beforeAll, describe, expect, it } from '@jest/globals';
import { createLink, startConnectStack, type ConnectStack } from '../support/connect-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: ConnectStack;
/** connect_settings:read and :manage (a full key's defaults). */
let admin: TestKey;
let readOnly: TestKey;
let standard: TestKey;
let readScopeOnly: TestKey;
let otherScopeOnly: TestKey;
let otherEnv: TestKey;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Settings {
  displayName: string;
  accentColor: string;
  logoUrl: string | null;
  supportUrl: string | null;
  theme: { mode: string; radius: number };
  updated_at: string | null;
  updated_by: string | null;
}

interface Answer {
  status: number;
  body: {
    data: Settings;
    error: {
      code: string;
      retryable: boolean;
      issues?: { path: string; message: string }[];
      [key: string]: unknown;
    };
  };
}

type Scheme = 'bearer' | 'apiKey';

async function call(
  key: TestKey,
  method: 'GET' | 'PUT',
  body?: unknown,
  scheme: Scheme = 'bearer',
): Promise<Answer> {
  const auth: Record<string, string> =
    scheme === 'bearer' ? { authorization: `Bearer ${key.key}` } : { 'x-api-key': key.key };
  const response = await fetch(`${stack.api.url}/v1/connect-settings`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const get = (key: TestKey = admin) => call(key, 'GET');
const put = (body: unknown, key: TestKey = admin) => call(key, 'PUT', body);

const northwind = {
  displayName: 'Northwind Ops',
  accentColor: '#0f766e',
  logoUrl: 'https://cdn.northwind.example/logo.png',
  supportUrl: 'https://help.northwind.example/connect',
  theme: { mode: 'dark', radius: 4 },
};

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...northwind, ...overrides };
}

function expectInvalid(answer: Answer, path: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 'invalid_request', retryable: false });
  expect(answer.body.error.issues?.map((issue) => issue.path)).toContain(path);
}

const DEFAULTS = {
  displayName: 'Gatehouse',
  accentColor: '#4f46e5',
  logoUrl: null,
  supportUrl: null,
  theme: { mode: 'system', radius: 10 },
  updated_at: null,
  updated_by: null,
};

const started = stopsAfterAll();

beforeAll(async () => {
  // The connect stack's environment `test` has an auth config for acme, so links can be made.
  stack = started.add(await startConnectStack());
  const business = { env: 'test', audience: 'business' } as const;
  admin = await createTestKey(stack.db.sql, { ...business, access: 'full', agentId: 'brand-bot' });
  readOnly = await createTestKey(stack.db.sql, { ...business, access: 'read_only' });
  standard = await createTestKey(stack.db.sql, { ...business, access: 'standard' });
  readScopeOnly = await createTestKey(stack.db.sql, {
    ...business,
    access: 'full',
    scopes: ['connect_settings:read'],
  });
  otherScopeOnly = await createTestKey(stack.db.sql, {
    ...business,
    access: 'full',
    scopes: ['auth_configs:read', 'auth_configs:manage'],
  });
  otherEnv = await createTestKey(stack.db.sql, {
    env: 'elsewhere',
    access: 'full',
    audience: 'business',
  });
});

describe('GET /v1/connect-settings (get_connect_settings)', () => {
  it('answers the defaults, with null updated_at and updated_by, until someone sets them', async () => {
    expect(await get()).toEqual({ status: 200, body: { data: DEFAULTS } });
  });
});

describe('PUT /v1/connect-settings (update_connect_branding)', () => {
  it('stores the branding, names who set it, and reads back the same', async () => {
    const before = Date.now();
    const answer = await put(northwind);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      data: { ...northwind, updated_at: expect.stringMatching(ISO), updated_by: 'brand-bot' },
    });
    expect(new Date(answer.body.data.updated_at ?? '').getTime()).toBeGreaterThanOrEqual(
      before - 1000,
    );
    expect(await get()).toEqual(answer);
    // Another environment keeps its own (default) settings.
    expect((await get(otherEnv)).body.data).toEqual(DEFAULTS);
  });

  it('replaces everything: omitted URLs become null, an omitted radius its default', async () => {
    await put(northwind);
    const answer = await put({
      displayName: 'Plain',
      accentColor: '#000000',
      theme: { mode: 'light' },
    });
    expect(answer.body.data).toMatchObject({
      displayName: 'Plain',
      accentColor: '#000000',
      logoUrl: null,
      supportUrl: null,
      theme: { mode: 'light', radius: 10 },
    });
    const cleared = await put(body({ logoUrl: null, supportUrl: null }));
    expect(cleared.body.data).toMatchObject({ logoUrl: null, supportUrl: null });
  });

  it('accepts every field at its bounds', async () => {
    const url = (length: number) => {
      const base = 'https://example.com/';
      return base + 'a'.repeat(length - base.length);
    };
    for (const accepted of [
      body({ displayName: 'N' }),
      body({ displayName: 'N'.repeat(100) }),
      body({ displayName: 'Northwind <Ops> & Sons' }),
      body({ logoUrl: url(2048), supportUrl: url(2048) }),
      body({ logoUrl: 'http://localhost:8080/logo.svg' }),
      body({ theme: { mode: 'light', radius: 0 } }),
      body({ theme: { mode: 'system', radius: 24 } }),
      body({ accentColor: '#ffffff' }),
    ]) {
      const answer = await put(accepted);
      expect(answer.status).toBe(200);
      expect(answer.body.data).toMatchObject(accepted);
    }
  });

  it.each([
    ['an empty displayName', { displayName: '' }, 'displayName'],
    ['a displayName over 100 characters', { displayName: 'N'.repeat(101) }, 'displayName'],
    ['a blank displayName', { displayName: '   ' }, 'displayName'],
    ['a displayName with a control character', { displayName: 'Ops\n' }, 'displayName'],
    ['a missing displayName', { displayName: undefined }, 'displayName'],
    ['an uppercase accentColor', { accentColor: '#0F766E' }, 'accentColor'],
    ['a 3-digit accentColor', { accentColor: '#0f7' }, 'accentColor'],
    ['an accentColor without #', { accentColor: '0f766e' }, 'accentColor'],
    ['an 8-digit accentColor', { accentColor: '#0f766eff' }, 'accentColor'],
    ['a non-hex accentColor', { accentColor: '#0f766g' }, 'accentColor'],
    ['a named accentColor', { accentColor: 'teal' }, 'accentColor'],
    ['a missing accentColor', { accentColor: undefined }, 'accentColor'],
    ['a logoUrl over 2048 characters', { logoUrl: `https://e.com/${'a'.repeat(2035)}` }, 'logoUrl'],
    ['a relative logoUrl', { logoUrl: '/logo.png' }, 'logoUrl'],
    ['an empty logoUrl', { logoUrl: '' }, 'logoUrl'],
    ['a javascript: logoUrl', { logoUrl: 'javascript:alert(1)' }, 'logoUrl'],
    [
      'a supportUrl over 2048 characters',
      { supportUrl: `https://e.com/${'a'.repeat(2035)}` },
      'supportUrl',
    ],
    ['a data: supportUrl', { supportUrl: 'data:text/html,hi' }, 'supportUrl'],
    ['a supportUrl that is not a string', { supportUrl: 42 }, 'supportUrl'],
    ['a missing theme', { theme: undefined }, 'theme'],
    ['a theme that is a string', { theme: 'dark' }, 'theme'],
    ['an unknown theme.mode', { theme: { mode: 'sepia' } }, 'theme.mode'],
    ['an uppercase theme.mode', { theme: { mode: 'Dark' } }, 'theme.mode'],
    ['a missing theme.mode', { theme: { radius: 4 } }, 'theme.mode'],
    ['a negative theme.radius', { theme: { mode: 'dark', radius: -1 } }, 'theme.radius'],
    ['a theme.radius over 24', { theme: { mode: 'dark', radius: 25 } }, 'theme.radius'],
    ['a fractional theme.radius', { theme: { mode: 'dark', radius: 1.5 } }, 'theme.radius'],
    ['a theme.radius as text', { theme: { mode: 'dark', radius: '4px' } }, 'theme.radius'],
    ['an unknown theme property', { theme: { mode: 'dark', font: 'serif' } }, 'theme.font'],
    ['an unknown property', { accent_color: '#0f766e' }, 'accent_color'],
  ])('refuses %s', async (_what, overrides, path) => {
    expectInvalid(await put(body(overrides)), path);
  });

  it('leaves the stored settings alone when it refuses', async () => {
    const stored = await put(northwind);
    expectInvalid(await put(body({ accentColor: '#ABCDEF' })), 'accentColor');
    expectInvalid(await put(['not', 'an', 'object']), 'body');
    expect(await get()).toEqual(stored);
  });
});

describe('the hosted connect page', () => {
  it('shows new settings at once, also on a link made before the change', async () => {
    await put(northwind);
    const response = await createLink(stack, { user: 'u_branded', app: 'acme' });
    expect(response.status).toBe(201);
    const link = (await response.json()) as { url: string };

    const first = await fetch(link.url);
    expect(first.status).toBe(200);
    const page = await first.text();
    expect(page).toContain(
      '<h1>Connect <span class="keep">Acme Tasks</span> to <span class="keep">Northwind Ops</span></h1>',
    );
    expect(page).toContain('--accent:#0f766e');
    expect(page).toContain('--radius:4px');
    expect(page).toContain('color-scheme:dark');
    expect(page).toContain('src="https://cdn.northwind.example/logo.png"');
    expect(page).toContain('href="https://help.northwind.example/connect"');

    await put({
      displayName: 'Contoso <Support>',
      accentColor: '#be123c',
      theme: { mode: 'light', radius: 0 },
    });
    const again = await (await fetch(link.url)).text();
    expect(again).toContain(
      '<h1>Connect <span class="keep">Acme Tasks</span> to <span class="keep">Contoso &lt;Support&gt;</span></h1>',
    );
    expect(again).not.toContain('Northwind');
    expect(again).toContain('--accent:#be123c');
    expect(again).not.toContain('#0f766e');
    expect(again).toContain('--radius:0px');
    expect(again).toContain('color-scheme:light');
    expect(again).not.toContain('cdn.northwind.example');
    expect(again).not.toContain('help.northwind.example');
  });
});

describe('access', () => {
  it.each([
    ['bearer', 'Authorization: Bearer'],
    ['apiKey', 'X-API-Key'],
  ] as const)('accepts the %s scheme (%s) on both operations', async (scheme, _header) => {
    expect((await call(admin, 'PUT', northwind, scheme)).status).toBe(200);
    expect((await call(admin, 'GET', undefined, scheme)).status).toBe(200);
  });

  it('refuses a missing key with invalid_api_key', async () => {
    const response = await fetch(`${stack.api.url}/v1/connect-settings`);
    expect(response.status).toBe(401);
  });

  it('needs connect_settings:read to read and connect_settings:manage to change', async () => {
    const stored = await put(northwind);
    const change = body({ displayName: 'Hijacked' });
    const refusals: [TestKey, 'GET' | 'PUT', Record<string, string>][] = [
      [otherScopeOnly, 'GET', { required_scope: 'connect_settings:read' }],
      [otherScopeOnly, 'PUT', { required_scope: 'connect_settings:manage' }],
      [readScopeOnly, 'PUT', { required_scope: 'connect_settings:manage' }],
      [standard, 'PUT', { required_scope: 'connect_settings:manage' }],
      [readOnly, 'PUT', { required_access: 'standard' }],
    ];
    for (const [key, method, extra] of refusals) {
      const answer = await call(key, method, method === 'PUT' ? change : undefined);
      expect(answer.status).toBe(403);
      expect(answer.body.error).toMatchObject({ code: 'insufficient_access', ...extra });
    }
    for (const key of [readScopeOnly, standard, readOnly]) {
      expect(await get(key)).toEqual(stored);
    }
  });
});

describe('the OpenAPI description', () => {
  it('describes both operations with their scopes and the body schema', async () => {
    const doc = (await (await fetch(`${stack.api.url}/openapi/management.json`)).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(doc.paths['/v1/connect-settings']?.get).toMatchObject({
      operationId: 'get_connect_settings',
      'x-service-scopes': ['connect_settings:read'],
      'x-service-mcp': 'read',
      'x-service-audience': 'business',
    });
    expect(doc.paths['/v1/connect-settings']?.put).toMatchObject({
      operationId: 'update_connect_branding',
      'x-service-scopes': ['connect_settings:manage'],
      'x-service-mcp': 'proposal',
    });
    expect(doc.components.schemas.update_connect_branding_input).toMatchObject({
      additionalProperties: false,
      required: expect.arrayContaining(['displayName', 'accentColor', 'theme']),
    });
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['get_connect_settings_output', 'update_connect_branding_output']),
    );
  });
});
