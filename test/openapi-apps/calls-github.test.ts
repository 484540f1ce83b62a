// GitHub's published OpenAPI description (@octokit/openapi, 13 MB, fetched on demand) imported as
// an app through the management API, its operations listed as actions, and called through the
// call workflow against Prism serving the same description on loopback: a read answered, and an
// issue created once after its approval. A recording proxy in front of Prism counts what reached
// it. The import is heavy: done once for the file.
import http from 'node:http';
import { createReadStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ensureOctokitOpenApi } from '../../infra/tools/openapi-documents.js';
import { startCallStack, type Answer, type CallStack } from '../support/call-stack.js';
import { startPrism, type PrismServer } from '../support/prism-server.js';

let stack: CallStack;
let prism: PrismServer;
/** Serves the description for `document_url`, and forwards calls to Prism, recording them. */
let front: http.Server;
let frontUrl: string;
const forwarded: { method: string; url: string }[] = [];

function listening(server: http.Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(`http://127.0.0.1:${String((server.address() as AddressInfo).port)}`);
    });
  });
}

function errorOf(answer: Answer): { code: string; message: string; approval?: { id: string } } {
  return answer.body.error as { code: string; message: string; approval?: { id: string } };
}

beforeAll(async () => {
  const github = await ensureOctokitOpenApi();
  [prism, stack] = await Promise.all([
    startPrism(github.bundled),
    startCallStack({ env: { MCP_APPS_ALLOW_PRIVATE: 'true' } }),
  ]);
  const target = new URL(prism.url);
  front = http.createServer((req, res) => {
    if (req.url === '/github.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      createReadStream(github.bundled).pipe(res);
      return;
    }
    forwarded.push({ method: req.method ?? '', url: req.url ?? '' });
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  frontUrl = await listening(front);
  const registered = await stack.request(stack.key, 'POST', '/v1/openapi-apps', {
    body: {
      id: 'github-api',
      name: 'GitHub',
      document_url: `${frontUrl}/github.json`,
      base_url: frontUrl,
    },
  });
  expect([registered.status, JSON.stringify(registered.body.error ?? null)]).toEqual([200, 'null']);
}, 10 * 60_000);

afterAll(async () => {
  await stack.stop();
  await prism.stop();
  await new Promise((resolve) => front.close(resolve));
});

describe("GitHub's description as an app", () => {
  it('lists about a thousand actions, accepted by the registration', async () => {
    const shown = await stack.request(stack.key, 'GET', '/v1/openapi-apps/github-api');
    const data = shown.body.data as {
      snapshot: { accepted_version: number | null };
      operations: { name: string; callable: boolean }[];
      base_url: string;
    };
    expect(data.snapshot.accepted_version).toBe(1);
    expect(data.base_url).toBe(frontUrl);
    expect(data.operations.length).toBeGreaterThan(1_000);
    const actions = await stack.request(stack.key, 'GET', '/v1/actions?app=github-api');
    const names = (actions.body.data as { action: string }[]).map((one) => one.action);
    expect(names.length).toBeGreaterThan(900);
    expect(names).toEqual(
      expect.arrayContaining(['github-api.issues_create', 'github-api.repos_get']),
    );
  });

  it('runs a read against Prism and answers its example', async () => {
    const before = forwarded.length;
    const run = await stack.run('github-api.repos_get', {
      user: 'u_1',
      input: { path: { owner: 'octocat', repo: 'hello-world' } },
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ ok: true, data: { full_name: expect.any(String) } });
    expect(forwarded.slice(before)).toEqual([{ method: 'GET', url: '/repos/octocat/hello-world' }]);
  });

  it('holds POST /repos/{owner}/{repo}/issues, and sends it once when approved', async () => {
    const input = {
      path: { owner: 'octocat', repo: 'hello-world' },
      body: { title: 'Found a bug', body: 'It does not work.' },
    };
    const issues = () =>
      forwarded.filter(
        (one) => one.method === 'POST' && one.url === '/repos/octocat/hello-world/issues',
      ).length;
    const held = await stack.run('github-api.issues_create', { user: 'u_1', input });
    expect([held.status, errorOf(held).code]).toEqual([403, 'approval_required']);
    expect(issues()).toBe(0);
    const id = errorOf(held).approval?.id ?? '';
    const decided = await stack.request(stack.approver, 'POST', `/v1/approvals/${id}/approve`);
    expect(decided.status).toBe(200);
    const ran = await stack.run('github-api.issues_create', { user: 'u_1', input });
    expect(ran.body).toMatchObject({ ok: true, data: { title: expect.any(String) } });
    expect(issues()).toBe(1);
  });

  it('refuses input its schema refuses, before anything is sent', async () => {
    const before = forwarded.length;
    const run = await stack.run('github-api.issues_create', {
      user: 'u_1',
      input: { path: { owner: 'octocat', repo: 'hello-world' }, body: { body: 'no title' } },
    });
    expect([run.status, errorOf(run).code]).toEqual([400, 'invalid_request']);
    expect(errorOf(run).message).toContain('input.body');
    expect(forwarded.length).toBe(before);
  });
});
