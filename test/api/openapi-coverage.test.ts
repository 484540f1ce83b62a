import { beforeAll, describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import { createApp } from '../../api/app.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let api: TestApi;

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
}

async function documentAt(path: string): Promise<OpenApiDocument> {
  const response = await fetch(`${api.url}${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as OpenApiDocument;
}

/**
 * Parameter names do not matter for the match: the management interface names the approval
 * `{approvalId}` where the connected-user one says `{id}`, on the one route that serves both.
 */
const samePath = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

/**
 * What Express really serves: `METHOD /path/{param}` for every route of every router, with the
 * path a router is mounted at (`rawPath`) before its routes' own.
 */
interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string;
}

function servedOperations(app: Express): string[] {
  const found: string[] = [];
  const visit = (stack: Layer[], mount: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const path = samePath(`${mount}${layer.route.path}`.replace(/:([A-Za-z_]+)/g, '{$1}'));
        for (const method of Object.keys(layer.route.methods)) {
          found.push(`${method.toUpperCase()} ${path}`);
        }
      } else if (layer.handle?.stack) {
        const at = layer.rawPath === undefined || layer.rawPath === '/' ? '' : layer.rawPath;
        visit(layer.handle.stack, `${mount}${at}`);
      }
    }
  };
  visit((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return found;
}

/**
 * Pages and machine endpoints that are not part of either interface (the client ID metadata
 * documents are for authorization servers; the console is for people in a browser; Slack's
 * interactivity endpoint is for Slack, which speaks its own documented contract).
 */
const OUTSIDE_THE_INTERFACES =
  /^(GET|POST|_ALL) \/(healthz|readyz|favicon\.(ico|svg)|connect\/|approvals\/review\/|console(\/|$)|openapi\/|codec\/|mcp(\/|$)|mcp-clients\/|slack\/)/;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  api = started.add(await startTestApi(testConfig(db.url), db.sql));
});

describe('the OpenAPI documents', () => {
  it.each(['/openapi/management.json', '/openapi/connected-users.json'])(
    '%s is valid OpenAPI 3.1 by a maintained validator',
    async (path) => {
      const document = await documentAt(path);
      const validator = new Validator();
      const result = await validator.validate(document as unknown as Record<string, unknown>);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    },
  );

  it('describe every route the app serves, and nothing it does not', async () => {
    const documented = new Set<string>();
    for (const path of ['/openapi/management.json', '/openapi/connected-users.json']) {
      const document = await documentAt(path);
      for (const [route, operations] of Object.entries(document.paths)) {
        for (const method of Object.keys(operations)) {
          documented.add(`${method.toUpperCase()} ${samePath(route)}`);
        }
      }
    }
    const app = createApp({
      config: testConfig(db.url),
      sql: db.sql,
      temporal: api.temporal,
      logger: (await import('../../infra/logger.js')).createLogger({ level: 'silent' }),
    });
    const served = new Set(
      servedOperations(app).filter((operation) => !OUTSIDE_THE_INTERFACES.test(operation)),
    );
    // The proxy is mounted as a whole (any method, any path below the app).
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      served.add(`${method} ${samePath('/v1/proxy/{app}/{path}')}`);
    }
    expect([...served].filter((operation) => !documented.has(operation)).sort()).toEqual([]);
    expect([...documented].filter((operation) => !served.has(operation)).sort()).toEqual([]);
  });
});
