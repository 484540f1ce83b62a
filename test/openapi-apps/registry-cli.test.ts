// `gatehouse apps import|show|list|refresh|accept|remove` for OpenAPI apps: the real binary,
// against its own database, with a hand-written document on disk.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { acceptOpenApiAppCommand } from '../../infra/cli/openapi-apps.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/** As in test/cli: a run of the real binary takes 3 to 9 s on this machine. */
const CLI_RUN_BUDGET_MS = 45_000;

let db: TestDatabase;
let folder: string;
const settings = { mcpApps: { allowPrivate: true }, upstream: { timeoutMs: 5_000 } };
const started = stopsAfterAll();

function document(path: string) {
  return {
    openapi: '3.0.3',
    info: { title: 'Notes', version: '1' },
    servers: [{ url: 'http://127.0.0.1:9/api' }],
    paths: {
      [path]: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { operationId: 'getNote', responses: { '200': { description: 'ok' } } },
        delete: { operationId: 'deleteNote', responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  await ensureEnvironment(db.sql, 'cli-openapi');
  folder = await mkdtemp(path.join(tmpdir(), 'openapi-cli-'));
  await writeFile(path.join(folder, 'v1.json'), JSON.stringify(document('/notes/{id}')));
  await writeFile(path.join(folder, 'v2.yaml'), `# YAML\n${JSON.stringify(document('/n/{id}'))}`);
});

describe('gatehouse apps import', () => {
  it(
    'imports a document from a file, shows it, pins a change until accepted, and removes it',
    async () => {
      const env = { DATABASE_URL: db.url, MCP_APPS_ALLOW_PRIVATE: 'true' };
      const cli = (...args: string[]) => runCli(args, env);
      const imported = await cli(
        'apps',
        'import',
        'notes',
        '--env',
        'cli-openapi',
        '--file',
        path.join(folder, 'v1.json'),
        '--grade',
        'get_note=write',
      );
      expect(imported).toMatchObject({ code: 0, stderr: '' });
      expect(imported.stdout).toMatch(/^base URL +http:\/\/127\.0\.0\.1:9\/api \(pinned\)$/m);
      expect(imported.stdout).toMatch(
        /^users connect +nothing \(no operation needs a credential\)$/m,
      );
      expect(imported.stdout).toMatch(/^get_note +GET +\/notes\/\{id\} +write \(override\) +yes$/m);
      expect(imported.stdout).toMatch(/^delete_note +DELETE .* destructive \(method\) +yes$/m);

      const listed = await cli('apps', 'list', '--env', 'cli-openapi');
      expect(listed.stdout).toMatch(/^OpenAPI apps of cli-openapi:$/m);
      expect(listed.stdout).toMatch(/^notes +notes +2 +none +http:\/\/127\.0\.0\.1:9\/api$/m);

      const refreshed = await cli(
        'apps',
        'refresh',
        'notes',
        '--env',
        'cli-openapi',
        '--file',
        path.join(folder, 'v2.yaml'),
      );
      expect(refreshed.stdout).toMatch(
        /snapshot v2 pending: changed delete_note \(path\), get_note \(path\)/,
      );
      expect(refreshed.stdout).toMatch(
        /^get_note .* no: operation "get_note" of app "notes" changed its path/m,
      );

      // The binary's own --version (the program's version) takes `apps accept --version` from
      // the command line, so the acceptance is the command's function, as test/cli does it.
      const accepted = {
        stdout: await acceptOpenApiAppCommand(db.sql, settings, 'notes', {
          env: 'cli-openapi',
          version: '2',
        }),
      };
      expect(accepted.stdout).toMatch(/accepted v2, latest v2; nothing pending/);

      const clash = await cli(
        'apps',
        'import',
        'acme',
        '--env',
        'cli-openapi',
        '--file',
        path.join(folder, 'v1.json'),
      );
      expect(clash.code).toBe(1);
      expect(clash.stderr).toMatch(/^gatehouse: <app>: "acme" is a catalog app's id/);

      const updated = await cli(
        'apps',
        'update',
        'notes',
        '--env',
        'cli-openapi',
        '--base-url',
        'http://127.0.0.1:10/v2',
        '--allow',
        'get_note',
      );
      expect(updated).toMatchObject({ code: 0, stderr: '' });
      expect(updated.stdout).toMatch(/^base URL +http:\/\/127\.0\.0\.1:10\/v2 \(pinned\)$/m);
      expect(updated.stdout).toMatch(
        /^delete_note .* no: .*outside the app's operation allow-list$/m,
      );

      const removed = await cli('apps', 'remove', 'notes', '--env', 'cli-openapi');
      expect(removed.stdout).toMatch(/removed OpenAPI app notes/);
    },
    6 * CLI_RUN_BUDGET_MS,
  );
});
