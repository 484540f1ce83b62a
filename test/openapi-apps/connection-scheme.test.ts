// How an OpenAPI app's users connect, chosen from its snapshot, and what each operation sends:
// pure functions, judged on an imported document with several schemes.
import { describe, expect, it } from '@jest/globals';
import { importDocument } from '../../activities/openapi-apps/index.js';
import {
  connectionOf,
  rankSchemes,
  type SchemeSource,
} from '../../activities/openapi-registry/connection-scheme.js';
import { credentialUseOf } from '../../activities/openapi-registry/operation-standing.js';

/** Three operations take the API key, one a bearer token or the key, one nothing, one a cookie. */
const imported = importDocument({
  document: JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Shop', version: '1' },
    servers: [{ url: 'https://shop.example' }],
    components: {
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Shop-Key' },
        bearer: { type: 'http', scheme: 'bearer' },
        session: { type: 'apiKey', in: 'cookie', name: 'sid' },
      },
    },
    security: [{ key: [] }],
    paths: {
      '/orders': {
        get: { operationId: 'listOrders', responses: { '200': { description: 'ok' } } },
        post: { operationId: 'createOrder', responses: { '201': { description: 'ok' } } },
      },
      '/orders/{id}': {
        delete: {
          operationId: 'deleteOrder',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '204': { description: 'ok' } },
        },
      },
      '/me': {
        get: {
          operationId: 'getMe',
          security: [{ bearer: [] }, { key: [] }],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/status': {
        get: {
          operationId: 'getStatus',
          security: [{}],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/cart': {
        get: {
          operationId: 'getCart',
          security: [{ session: [] }],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  }),
});
const whole: SchemeSource = {
  descriptors: imported.operations,
  import: {
    auth: imported.auth,
    schemeUse: rankSchemes({ descriptors: imported.operations, import: { auth: imported.auth } }),
  },
};
const operation = (name: string) => {
  const found = imported.operations.find((one) => one.name === name);
  if (!found) throw new Error(`no operation ${name}`);
  return found;
};

describe('the scheme users connect with', () => {
  it('is the supported one that alone serves the most operations, unless the operator chose', () => {
    expect(rankSchemes(whole)).toEqual([
      { name: 'key', operations: 4 },
      { name: 'bearer', operations: 1 },
    ]);
    expect(connectionOf({ authScheme: null }, whole)).toEqual({
      kind: 'credential',
      schemeName: 'key',
      scheme: { scheme: 'api_key', in: 'header', name: 'X-Shop-Key' },
    });
    expect(connectionOf({ authScheme: 'bearer' }, whole)).toMatchObject({
      kind: 'credential',
      schemeName: 'bearer',
      scheme: { scheme: 'bearer' },
    });
    expect(connectionOf({ authScheme: 'session' }, whole)).toMatchObject({ kind: 'unservable' });
    expect(connectionOf({ authScheme: 'nowhere' }, whole)).toMatchObject({ kind: 'unservable' });
    expect(connectionOf({ authScheme: null }, null)).toEqual({ kind: 'none' });
  });

  it('is chosen alike from a snapshot narrowed to one operation, as a call reads it', () => {
    // get_me alone counts bearer and key once each, and the tie would go to bearer by name; the
    // ranking kept with the snapshot decides, so the call and the app agree on key.
    const narrowed: SchemeSource = { descriptors: [operation('get_me')], import: whole.import };
    expect(connectionOf({ authScheme: null }, narrowed)).toMatchObject({ schemeName: 'key' });
    const counted = { descriptors: [operation('get_me')], import: { auth: imported.auth } };
    expect(rankSchemes(counted)).toEqual([
      { name: 'bearer', operations: 1 },
      { name: 'key', operations: 1 },
    ]);
  });
});

describe('what an operation sends', () => {
  const connection = connectionOf({ authScheme: null }, whole);

  it('the credential when it needs one the app connects with; nothing when it needs none', () => {
    expect(credentialUseOf('shop', operation('create_order'), connection)).toEqual({
      use: 'required',
    });
    expect(credentialUseOf('shop', operation('get_me'), connection)).toEqual({ use: 'required' });
    expect(credentialUseOf('shop', operation('get_status'), connection)).toEqual({ use: 'none' });
  });

  it('refuses an operation whose scheme is not the one users connect with, naming both', () => {
    const viaToken = connectionOf({ authScheme: 'bearer' }, whole);
    const refused = credentialUseOf('shop', operation('list_orders'), viaToken);
    expect(refused).toEqual({
      refusal: expect.stringMatching(
        /needs a credential of key, while the app's users connect with "bearer"/,
      ),
    });
    expect(credentialUseOf('shop', operation('get_cart'), connection)).toEqual({
      refusal: expect.stringMatching(/session.*cookie/),
    });
  });
});
