import { describe, expect, it } from '@jest/globals';
import { returnPath } from '../../api/routes/console-sign-in.js';
import { readSignInClaims } from '../../api/people/sign-in-claims.js';

const settings = { groupsClaim: 'groups', allowedEmailDomains: [] as string[] };
const base = { iss: 'https://idp.example.com', sub: '00u1', email: 'Ada@Example.com', name: 'Ada' };

describe('who signed in, from the ID token', () => {
  it('reads issuer, subject, email (lower-cased), name and groups', () => {
    expect(readSignInClaims({ ...base, groups: ['finance', 'approvers'] }, settings)).toEqual({
      ok: true,
      claims: {
        issuer: 'https://idp.example.com',
        subject: '00u1',
        email: 'ada@example.com',
        name: 'Ada',
        groups: ['finance', 'approvers'],
      },
    });
  });

  it.each([
    ['one string', 'finance', ['finance']],
    ['no claim', undefined, []],
    ['an object', { finance: true }, []],
    ['non-strings and repeats', ['finance', 7, null, 'finance', ''], ['finance']],
  ])('reads groups given as %s', (_what, groups, expected) => {
    const reading = readSignInClaims({ ...base, groups }, settings);
    expect(reading.ok && reading.claims.groups).toEqual(expected);
  });

  it('reads the groups from the configured claim only', () => {
    const reading = readSignInClaims(
      { ...base, groups: ['approvers'], roles: ['finance'] },
      { ...settings, groupsClaim: 'roles' },
    );
    expect(reading.ok && reading.claims.groups).toEqual(['finance']);
  });

  it('names the person by email when the provider gives no name', () => {
    const reading = readSignInClaims({ ...base, name: undefined }, settings);
    expect(reading.ok && reading.claims.name).toBe('ada@example.com');
  });

  it.each([
    ['no email', { email: undefined }, 'email_missing'],
    ['a malformed email', { email: 'not an address' }, 'email_missing'],
    ['an email said to be unverified', { email_verified: false }, 'email_unverified'],
  ])('refuses %s', (_what, claims, reason) => {
    expect(readSignInClaims({ ...base, ...claims }, settings)).toMatchObject({ ok: false, reason });
  });

  it('refuses an email outside the allowed domains, and takes one inside them', () => {
    const allowed = { ...settings, allowedEmailDomains: ['example.org'] };
    expect(readSignInClaims(base, allowed)).toMatchObject({ ok: false, reason: 'email_domain' });
    // A subdomain is another domain; so is a lookalike ending.
    expect(readSignInClaims({ ...base, email: 'ada@evil.example.org' }, allowed)).toMatchObject({
      ok: false,
    });
    expect(readSignInClaims({ ...base, email: 'ada@example.org' }, allowed).ok).toBe(true);
  });

  it('keeps at most 200 groups of at most 200 characters', () => {
    const many = Array.from({ length: 500 }, (_, i) => `group-${String(i)}`);
    const reading = readSignInClaims({ ...base, groups: [...many, 'x'.repeat(201)] }, settings);
    expect(reading.ok && reading.claims.groups).toHaveLength(200);
  });
});

describe('where sign-in lands', () => {
  it.each([
    ['/console/test/inbox/0190', '/console/test/inbox/0190'],
    [undefined, '/console/test/inbox'],
    ['/console/other/inbox', '/console/test/inbox'],
    ['https://evil.example/console/test/', '/console/test/inbox'],
    ['//evil.example/console/test/', '/console/test/inbox'],
    ['/console/test//evil.example', '/console/test/inbox'],
    ['/console/test/\\evil', '/console/test/inbox'],
    [['/console/test/calls'], '/console/test/inbox'],
  ])('returns %p to %s', (given, expected) => {
    expect(returnPath(given, 'test')).toBe(expected);
  });
});
