import { describe, expect, it } from '@jest/globals';
import { signInLines } from '../../infra/cli/dev.js';
import { DEV_ACCOUNTS, DEV_PASSWORD, PROVIDER_NAME } from '../../infra/dev-idp/index.js';
import { DEV_ROLE_MAPPINGS } from '../../infra/dev/dev-seed.js';

const CONSOLE = 'http://127.0.0.1:3000/console/development';
const seeded = Object.entries(DEV_ROLE_MAPPINGS).map(([group, roles]) => ({
  group,
  roles: [...roles],
}));

describe("the banner's sign-in part", () => {
  it('lists each demo person with their groups and the roles those hold now, and the password', () => {
    const lines = signInLines(
      {
        consoleUrl: CONSOLE,
        identityProvider: {
          issuer: 'http://127.0.0.1:4011',
          name: PROVIDER_NAME,
          accounts: DEV_ACCOUNTS,
        },
        // The finance group's roles taken away by an operator: Bob and Carol show what is left.
        roleMappings: seeded.filter((mapping) => mapping.group !== 'finance'),
      },
      DEV_PASSWORD,
    );
    expect(lines).toEqual([
      `  Sign in       ${CONSOLE}   (the console, as one of these people; password "demo" for all)`,
      '                alice@example.com    groups: approvers            roles: approver',
      '                bob@example.com      groups: finance              roles: none',
      '                carol@example.com    groups: approvers, finance   roles: approver',
      '                olivia@example.com   groups: operators            roles: operator, admin',
      '                nobody@example.com   groups: none                 roles: none',
      '  Sign-in IdP   http://127.0.0.1:4011   (OpenID Connect, "Gatehouse dev sign-in": a development provider, the console its client)',
    ]);
  });

  it("names no account and no password when the developer's own provider is used", () => {
    const lines = signInLines(
      { consoleUrl: CONSOLE, identityProvider: null, roleMappings: seeded },
      DEV_PASSWORD,
    );
    expect(lines).toEqual([
      `  Sign in       ${CONSOLE}   (with the provider OIDC_ISSUER_URL names)`,
    ]);
    expect(lines.join('\n')).not.toContain(DEV_PASSWORD);
  });
});
