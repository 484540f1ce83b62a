import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../infra/config.js';

const KEY = Buffer.alloc(32, 7).toString('base64');
const minimal = { DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/gatehouse', ENCRYPTION_KEY: KEY };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('fills defaults around the two required settings', () => {
    const config = loadConfig(minimal);
    expect(config.temporal).toMatchObject({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'gatehouse',
    });
    expect(config.api).toMatchObject({
      port: 3000,
      publicUrl: 'http://127.0.0.1:3000',
      bodyLimitBytes: 1048576,
    });
    expect(config.encryption.current.key).toHaveLength(32);
  });

  it('names every missing required setting', () => {
    expect(problems({})).toEqual(['DATABASE_URL: is required', 'ENCRYPTION_KEY: is required']);
  });

  it.each([
    ['API_PORT', 'seventy', /API_PORT/],
    ['API_PORT', '70000', /API_PORT/],
    ['DATABASE_URL', 'mysql://x/y', /DATABASE_URL: must be a postgres/],
    ['ENCRYPTION_KEY', Buffer.alloc(16).toString('base64'), /ENCRYPTION_KEY: must be 32 bytes/],
    ['TEMPORAL_TLS', 'perhaps', /TEMPORAL_TLS/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['PUBLIC_URL', 'ftp://example.com', /PUBLIC_URL/],
    ['BODY_LIMIT_BYTES', '10', /BODY_LIMIT_BYTES/],
    ['ENCRYPTION_PREVIOUS_KEYS', 'no-colon', /ENCRYPTION_PREVIOUS_KEYS/],
  ])('refuses %s=%s, naming it', (name, value, expected) => {
    const found = problems({ ...minimal, [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(expected);
  });

  it('requires the mutual-TLS certificate and key together', () => {
    expect(problems({ ...minimal, TEMPORAL_TLS_CERT_PATH: '/c.pem' })[0]).toMatch(
      /TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH/,
    );
  });

  it('keeps retired encryption keys for reading old values', () => {
    const old = Buffer.alloc(32, 1).toString('base64');
    const config = loadConfig({
      ...minimal,
      ENCRYPTION_KEY_ID: 'k2',
      ENCRYPTION_PREVIOUS_KEYS: `k1:${old}`,
    });
    expect(config.encryption.current.id).toBe('k2');
    expect(config.encryption.previous?.k1).toEqual(Buffer.from(old, 'base64'));
  });

  it('strips a trailing slash from the public URL', () => {
    expect(
      loadConfig({ ...minimal, PUBLIC_URL: 'https://gatehouse.example.com/' }).api.publicUrl,
    ).toBe('https://gatehouse.example.com');
  });
});
