// The README's inbox example works where the README shows it. The quick start is
// followed in order with the commands read from the README itself: "Govern calls" (a read, a held
// write approved and run), its policy change, then the first block of "Decide as a person"
// (its calls with the agent key, its inbox listings with the admin key). Under the default policy
// `requested_from` is empty, so an inbox filtered by `requested_from=admin` found nothing; a
// reader who skipped the optional policy change must still see a pending call.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startCallStack, type CallStack } from '../support/call-stack.js';
import { createTestKey, type TestKey } from '../support/keys.js';
import { stopsAfterAll } from '../support/stops.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

let stack: CallStack;
let readme: string;

const started = stopsAfterAll();

beforeAll(async () => {
  readme = await readFile(README, 'utf8');
  stack = started.add(await startCallStack());
}, 300_000);

/** The text of the `###` section whose heading starts with `title`, up to the next `##`/`###`. */
function section(title: string): string {
  const start = readme.indexOf(`\n### ${title}`);
  if (start < 0) throw new Error(`the README has no section "### ${title}…"`);
  const rest = readme.slice(start + 1);
  const end = rest.slice(4).search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end + 4);
}

/** The `sh` code blocks of a section, in order. */
function shBlocks(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

/** `run <action> '<json>'` lines: the README's shell function, which uses the agent key. */
function runs(block: string): { action: string; body: Record<string, unknown> }[] {
  return [...block.matchAll(/^run (\S+) '(.+)'$/gm)].map((match) => ({
    action: match[1] ?? '',
    body: JSON.parse(match[2] ?? '') as Record<string, unknown>,
  }));
}

/** The approval listings of a block, as paths: `curl -s "$GATEHOUSE_URL/v1/approvals?…"`. */
function inboxPaths(block: string): string[] {
  return [...block.matchAll(/curl -s "\$GATEHOUSE_URL(\/v1\/approvals\?[^"]*)"/g)].map(
    (match) => match[1] ?? '',
  );
}

/** The body of "Govern calls"' `PUT /v1/policies/default`. */
function policyChange(): Record<string, unknown> {
  const block = shBlocks(section('Govern calls')).find((text) =>
    text.includes('-X PUT "$GATEHOUSE_URL/v1/policies/default"'),
  );
  const body = block && /-d '([\s\S]*?)'/.exec(block)?.[1];
  if (!body) throw new Error('the README has no policy change in "Govern calls"');
  return JSON.parse(body) as Record<string, unknown>;
}

interface Reader {
  agent: TestKey;
  admin: TestKey;
}

/** `gatehouse dev`'s two keys in an environment of their own, and u_123 connected there. */
async function readerIn(environment: string): Promise<Reader> {
  const agent = await createTestKey(stack.db.sql, {
    env: environment,
    access: 'standard',
    agentId: 'demo-agent',
  });
  const admin = await createTestKey(stack.db.sql, {
    env: environment,
    access: 'full',
    audience: 'business',
    agentId: 'admin',
  });
  await stack.acme.connect({ environmentId: agent.environmentId, externalId: 'u_123' });
  return { agent, admin };
}

/** "Govern calls" as written: a read, a write held and approved by admin, the write again. */
async function governCalls(reader: Reader): Promise<void> {
  const steps = runs(shBlocks(section('Govern calls'))[0] ?? '');
  expect(steps.map((step) => step.action)).toEqual([
    'acme.list_tasks',
    'acme.create_task',
    'acme.create_task',
  ]);
  const [read, write] = steps;
  expect(
    (await stack.run(read?.action ?? '', read?.body ?? {}, { key: reader.agent })).status,
  ).toBe(200);
  const held = await stack.run(write?.action ?? '', write?.body ?? {}, { key: reader.agent });
  expect(held.status).toBe(403);
  const approvalId = (held.body.error as { approval: { id: string } }).approval.id;
  const approved = await stack.request(reader.admin, 'POST', `/v1/approvals/${approvalId}/approve`);
  expect(approved.status).toBe(200);
  expect(
    (await stack.run(write?.action ?? '', write?.body ?? {}, { key: reader.agent })).status,
  ).toBe(200);
}

/** The first block of "Decide as a person": its calls, then what each inbox listing answers. */
async function inboxExample(reader: Reader): Promise<{ path: string; pending: unknown[] }[]> {
  const block = shBlocks(section('Decide as a person'))[0] ?? '';
  for (const step of runs(block)) {
    const answer = await stack.run(step.action, step.body, { key: reader.agent });
    expect(answer.status).toBe(403);
  }
  const paths = inboxPaths(block);
  expect(paths.length).toBeGreaterThan(0);
  const listed = [];
  for (const path of paths) {
    const answer = await stack.request(reader.admin, 'GET', path);
    expect(answer.status).toBe(200);
    const pending = (answer.body.data as { status: string; user: string }[]).filter(
      (approval) => approval.status === 'pending' && approval.user === 'u_123',
    );
    listed.push({ path, pending });
  }
  return listed;
}

describe('the README’s inbox example, at its point of the quick start', () => {
  it('lists the pending call in every listing, after the README’s policy change', async () => {
    const reader = await readerIn('readme-in-order');
    await governCalls(reader);
    const changed = await stack.request(reader.admin, 'PUT', '/v1/policies/default', {
      body: policyChange(),
    });
    expect(changed.status).toBe(200);
    for (const { path, pending } of await inboxExample(reader)) {
      expect({ path, listed: pending.length > 0 }).toEqual({ path, listed: true });
    }
  });

  it('lists the pending call in its first listing under the default policy too', async () => {
    const reader = await readerIn('readme-default-policy');
    await governCalls(reader);
    const [first] = await inboxExample(reader);
    expect({ path: first?.path, listed: (first?.pending.length ?? 0) > 0 }).toEqual({
      path: first?.path,
      listed: true,
    });
  });
});
