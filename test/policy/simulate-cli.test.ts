import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import { auditRequest } from '../../activities/calls/call-records.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { simulatePolicyCommand } from '../../infra/cli/policies.js';
import type { CallRequest } from '../../workflows/call-types.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in test/cli: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

let db: TestDatabase;
let dir: string;
const ids: Record<string, string> = {};

async function record(title: string): Promise<string> {
  const environment = await ensureEnvironment(db.sql, 'cli-sim');
  const call: CallRequest = {
    environmentId: environment.id,
    environmentName: environment.name,
    agentId: 'writer-bot',
    userExternalId: 'u_cli',
    via: 'api',
    fingerprint: 'f',
    target: {
      kind: 'action',
      action: 'acme.create_task',
      app: 'acme',
      scope: 'write',
      input: { title },
    },
    retryWindowSeconds: 3600,
  };
  const id = uuidv7();
  await insertAuditEvents(db.sql, [
    {
      id,
      environmentId: environment.id,
      action: 'acme.create_task',
      scope: 'write',
      decision: 'blocked',
      reason: 'policy default v1: defaults.write → ask',
      agentId: call.agentId,
      via: call.via,
      userExternalId: call.userExternalId,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: auditRequest(call),
      response: null,
      traceId: id,
      policyId: 'default',
      policyVersion: 1,
    },
  ]);
  return id;
}

/** Lets short titles through and still asks for long ones: writes the default policy asks. */
const candidate = {
  defaults: { read: 'allow', write: 'ask', destructive: 'deny' },
  rules: [{ action: 'acme.create_task', when: 'size(input.title) <= 10', decision: 'allow' }],
};

async function file(name: string, content: unknown): Promise<string> {
  const at = path.join(dir, name);
  await writeFile(at, typeof content === 'string' ? content : JSON.stringify(content));
  return at;
}

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-simulate-'));
  started.push(() => rm(dir, { recursive: true, force: true }));
  ids.short = await record('Ship it');
  ids.long = await record('Write the quarterly report');
});

describe('gatehouse policies simulate', () => {
  it('prints what would change as a table', async () => {
    const text = await simulatePolicyCommand(db.sql, await file('candidate.json', candidate), {
      env: 'cli-sim',
    });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^policy default \(v1\) against the candidate: 2 calls, \S+ to \S+$/);
    expect(lines[2]).toMatch(/^FROM +TO +CALLS +SAMPLES \(audit ids\)$/);
    expect(text).toMatch(new RegExp(`^ask +allow +1 +${ids.short ?? ''}$`, 'm'));
    expect(text).toMatch(/^unchanged +1 *$/m);
    expect(text).toMatch(/^cannot judge +0 *$/m);
  });

  it("takes a saved GET answer, its id naming the policy, and prints the API's JSON with --json", async () => {
    const saved = {
      id: 'default',
      name: 'Default',
      environment: 'cli-sim',
      agents: ['*'],
      version: 1,
      ...candidate,
      approval: { requested_from: [], ttl_seconds: 86400 },
      updated_at: '2026-03-02T09:00:00.000Z',
      updated_by: 'gatehouse',
    };
    const json = JSON.parse(
      await simulatePolicyCommand(db.sql, await file('saved.json', saved), {
        env: 'cli-sim',
        json: true,
        last: '1',
      }),
    ) as Record<string, unknown>;
    // The newest call is the long title: still asked.
    expect(json).toMatchObject({
      policy: { id: 'default', current_version: 1 },
      calls: 1,
      unchanged: 1,
      changes: [],
      window: { last: 1, more: true },
    });
  });

  it('names what is wrong in the file or the flags', async () => {
    const bad = await file('bad.json', {
      ...candidate,
      rules: [{ action: 'acme.create_task', when: 'size(input.title) <=', decision: 'allow' }],
    });
    await expect(simulatePolicyCommand(db.sql, bad, { env: 'cli-sim' })).rejects.toThrow(
      /bad\.json rules\.0\.when: line 1, column \d+: /,
    );
    const good = await file('good.json', candidate);
    await expect(
      simulatePolicyCommand(db.sql, good, { env: 'cli-sim', last: '10001' }),
    ).rejects.toThrow(/^--last: /);
    await expect(
      simulatePolicyCommand(db.sql, good, { env: 'cli-sim', policy: 'Not A Slug' }),
    ).rejects.toThrow(/^policy id: /);
    await expect(simulatePolicyCommand(db.sql, good, { env: 'nowhere' })).rejects.toThrow(
      'no environment "nowhere"',
    );
    const withId = await file('with-id.json', { ...candidate, id: 'ops' });
    await expect(
      simulatePolicyCommand(db.sql, withId, { env: 'cli-sim', policy: 'default' }),
    ).rejects.toThrow(/--policy default and the file's id ops differ/);
  });

  it(
    'runs as the real binary: the table, and a file that does not parse, exit 1 without a stack',
    async () => {
      const env = { DATABASE_URL: db.url };
      const ran = await runCli(
        ['policies', 'simulate', await file('bin.json', candidate), '--env', 'cli-sim'],
        env,
      );
      expect(ran).toMatchObject({ code: 0, stderr: '' });
      expect(ran.stdout).toMatch(new RegExp(`^ask +allow +1 +${ids.short ?? ''}$`, 'm'));
      const broken = await runCli(
        ['policies', 'simulate', await file('broken.json', '{"defaults": {'), '--env', 'cli-sim'],
        env,
      );
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/^gatehouse: .*broken\.json: .*JSON/);
      expect(broken.stderr).not.toMatch(/\n\s+at /);
    },
    2 * CLI_RUN_BUDGET_MS,
  );
});
