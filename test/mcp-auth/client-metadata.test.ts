// Gatehouse's client ID metadata document: what an authorization server reads
// at the URL Gatehouse presents as its client id, built from the environment's MCP client
// branding, and only where PUBLIC_URL is https.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { saveMcpClientBranding } from '../../activities/db/mcp-client-branding.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testConfig } from '../support/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

let db: TestDatabase;
let https: TestApi;
let plain: TestApi;

const started = stopsAfterAll();

beforeAll(async () => {
  db = started.add(await createTestDatabase());
  // Behind a TLS-terminating proxy: the API itself listens on plain http.
  https = started.add(
    await startTestApi(testConfig(db.url, { PUBLIC_URL: 'https://gatehouse.example' }), db.sql),
  );
  plain = started.add(await startTestApi(testConfig(db.url), db.sql));
  await ensureEnvironment(db.sql, 'test');
});

const documentAt = (api: TestApi, environment: string) =>
  fetch(`${api.url}/mcp-clients/${environment}/metadata.json`);

describe('GET /mcp-clients/{environment}/metadata.json', () => {
  it('is not found until the environment has MCP client branding', async () => {
    expect((await documentAt(https, 'test')).status).toBe(404);
  });

  it('describes Gatehouse as a public client, from the branding, naming its own URL as client_id', async () => {
    const environment = await ensureEnvironment(db.sql, 'test');
    await saveMcpClientBranding(
      db.sql,
      environment.id,
      {
        clientName: 'Northwind Assistant',
        logoUri: 'https://northwind.example/logo.png',
        clientUri: 'https://northwind.example',
        policyUri: null,
        tosUri: 'https://northwind.example/terms',
      },
      'admin',
    );
    const response = await documentAt(https, 'test');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await response.json()).toEqual({
      client_id: 'https://gatehouse.example/mcp-clients/test/metadata.json',
      client_name: 'Northwind Assistant',
      logo_uri: 'https://northwind.example/logo.png',
      client_uri: 'https://northwind.example',
      tos_uri: 'https://northwind.example/terms',
      redirect_uris: ['https://gatehouse.example/connect/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it('is not served where PUBLIC_URL is plain http (a client id URL must be https)', async () => {
    const response = await documentAt(plain, 'test');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it.each(['production', 'Not-A-Name', '..'])('is not found for environment %s', async (name) => {
    expect((await documentAt(https, encodeURIComponent(name))).status).toBe(404);
  });
});
