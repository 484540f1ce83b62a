import { describe, expect, it } from '@jest/globals';
import { defaultScopes, type AccessLevel, type Caller } from '../../activities/db/api-keys.js';
import { ApiError } from '../../api/errors.js';
import { checkAccess, type Operation } from '../../api/http/authorize.js';

function caller(access: AccessLevel): Caller {
  return {
    keyId: 'k',
    keyName: 'k',
    environmentId: 'e',
    environmentName: 'production',
    access,
    scopes: defaultScopes(access),
    agentId: 'a',
    audience: 'backend',
  };
}

function outcome(access: AccessLevel, operation: Operation): string {
  try {
    checkAccess(caller(access), { operation });
    return 'allowed';
  } catch (error) {
    return error instanceof ApiError ? error.code : 'unexpected';
  }
}

describe('access levels', () => {
  it.each([
    ['read_only', 'read', 'allowed'],
    ['read_only', 'write', 'insufficient_access'],
    ['read_only', 'call', 'insufficient_access'],
    ['read_only', 'export', 'insufficient_access'],
    ['standard', 'read', 'allowed'],
    ['standard', 'write', 'allowed'],
    ['standard', 'call', 'allowed'],
    ['standard', 'export', 'insufficient_access'],
    ['full', 'read', 'allowed'],
    ['full', 'write', 'allowed'],
    ['full', 'call', 'allowed'],
    ['full', 'export', 'allowed'],
  ] as const)('%s key, %s operation: %s', (access, operation, expected) => {
    expect(outcome(access, operation)).toBe(expected);
  });

  it('gives each level its default scopes: only full keys may decide or govern', () => {
    const reads = [
      'funded_access:read',
      'auth_configs:read',
      'approvals:read',
      'connect_settings:read',
      'policies:read',
      'apps:read',
    ];
    expect(defaultScopes('read_only')).toEqual(reads);
    // Separation of duties: the keys agents call with cannot decide approvals or change policy,
    // nor see or set who decides (people:read, people:manage), nor where the deciders are told
    // (notifications:read, notifications:manage).
    expect(defaultScopes('standard')).toEqual(reads);
    expect(defaultScopes('full')).toEqual(
      expect.arrayContaining([
        ...reads,
        'approvals:decide',
        'policies:manage',
        'mcp_sessions:manage',
        'apps:manage',
        'grants:read',
        'grants:manage',
        'people:read',
        'people:manage',
        'notifications:read',
        'notifications:manage',
      ]),
    );
    expect(defaultScopes('full')).toHaveLength(19);
  });
});
