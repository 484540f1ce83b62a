// The client's generated types cannot drift from the documents the service serves:
// they are generated again here from the live documents of a running API, as `npm run
// client:generate` writes them, and must equal the checked-in files byte for byte.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { generatedPath, generatedTypes, type Interface } from '../../api/client/generate.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
});

const SERVED: Record<Interface, string> = {
  connectedUsers: '/openapi/connected-users.json',
  management: '/openapi/management.json',
};

describe('the generated client types', () => {
  it.each(Object.entries(SERVED) as [Interface, string][])(
    'are the types of the served %s document (else: npm run client:generate)',
    async (which, path) => {
      const response = await fetch(`${api.url}${path}`);
      expect(response.status).toBe(200);
      const fresh = await generatedTypes(which, await response.text());
      const checkedIn = await readFile(generatedPath(which), 'utf8');
      if (fresh !== checkedIn) {
        throw new Error(
          `${generatedPath(which)} differs from the types of the served ${path}: run npm run client:generate`,
        );
      }
    },
  );
});
