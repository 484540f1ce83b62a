// One name for the next page's cursor on the connected-user lists: `cursor`, in the
// query and in the answer, whatever the key. `GET /v1/approvals` answered a `business` key with
// `nextCursor` only, where the audit log and the users list answer `cursor` to the same key; it
// now answers `cursor`, and `nextCursor` too (the same value) until the date the README gives.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

let stack: CallStack;
/** Full, `business` audience: the admin key of `gatehouse dev`. */
let business: TestKey;
/** Standard, `backend` audience: the agent key, which makes the held calls. */
let backend: TestKey;

const USER = 'u_pages';

const started = stopsAfterAll();

beforeAll(async () => {
  stack = started.add(await startCallStack());
  business = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'full',
    audience: 'business',
    agentId: 'admin',
  });
  backend = await createTestKey(stack.db.sql, {
    env: 'test',
    access: 'standard',
    agentId: 'pager',
  });
  await stack.connect(USER);
  // Three held calls (the default policy asks for writes), so a page of one has a next page.
  for (const title of ['one', 'two', 'three']) {
    const held = await stack.run(
      'acme.create_task',
      { user: USER, input: { title } },
      { key: backend },
    );
    expect(held.status).toBe(403);
  }
}, 300_000);

type Page = Answer<{ data: { id: string }[]; cursor?: string | null; nextCursor?: string | null }>;

const get = (key: TestKey, path: string) => stack.request(key, 'GET', path) as Promise<Page>;

/** Every item of a list, following `cursor` one item a page. */
async function follow(key: TestKey, path: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null | undefined = null;
  do {
    const page: Page = await get(
      key,
      `${path}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(page.status).toBe(200);
    ids.push(...page.body.data.map((item) => item.id));
    cursor = page.body.cursor;
    expect(cursor === null || typeof cursor === 'string').toBe(true);
  } while (cursor);
  return ids;
}

describe('the next page’s cursor on the connected-user lists', () => {
  it.each([
    ['/v1/approvals', `/v1/approvals?user=${USER}`],
    ['/v1/audit', `/v1/audit?user=${USER}`],
    ['/v1/users', '/v1/users?status=active'],
  ])('%s pages with `cursor` for a business key and a backend key alike', async (_list, path) => {
    const byBusiness = await follow(business, path);
    const byBackend = await follow(backend, path);
    expect(byBusiness.length).toBeGreaterThanOrEqual(1);
    expect(byBusiness).toEqual(byBackend);
    expect(new Set(byBusiness).size).toBe(byBusiness.length);
  });

  it('GET /v1/approvals answers a business key `nextCursor` beside `cursor`, the same value, for now', async () => {
    const first = await get(business, `/v1/approvals?user=${USER}&limit=1`);
    expect(Object.keys(first.body).sort()).toEqual(['cursor', 'data', 'nextCursor']);
    expect(first.body.cursor).toEqual(expect.any(String));
    expect(first.body.nextCursor).toBe(first.body.cursor);
    const last = await get(business, `/v1/approvals?user=${USER}&limit=100`);
    expect(last.body).toMatchObject({ cursor: null, nextCursor: null });
  });

  it('GET /v1/approvals answers a backend key `{data, cursor}` only', async () => {
    const first = await get(backend, `/v1/approvals?user=${USER}&limit=1`);
    expect(Object.keys(first.body).sort()).toEqual(['cursor', 'data']);
  });

  it('the management document gives list_approvals `cursor`, and `nextCursor` as deprecated', async () => {
    const document = await stack.request(business, 'GET', '/openapi/management.json');
    const operation = (
      document.body as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      }
    ).paths['/v1/approvals']?.get;
    const schema = JSON.stringify(operation?.responses['200']);
    expect(schema).toMatch(/"cursor":\{/);
    expect(schema).toMatch(/"nextCursor":\{[^}]*"deprecated":true/);
  });
});
