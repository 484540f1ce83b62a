import { z } from 'zod';

/**
 * A person of the dev sign-in provider. `sub` is what the ID token says the person is (stable,
 * not the email, as a company provider's subject is); the rest are the claims released with the
 * `email`, `profile` and `groups` scopes.
 */
export interface DevAccount {
  sub: string;
  email: string;
  name: string;
  groups: readonly string[];
}

/**
 * The one password of every account. This provider only ever runs for development and tests, on
 * loopback, so the password is no secret: the sign-in page and the `gatehouse dev` banner print it.
 */
export const DEV_PASSWORD = 'demo';

/**
 * The demo people. A held destructive call can ask for two people, one from `approvers` and one
 * from `finance`: Alice and Bob are that pair, each in one group only, so the two approvals come
 * from two different people. Carol is in both groups, for the case where one person must not
 * count twice. Olivia runs Gatehouse (operators), and Nora is in no group at all: signed in,
 * and allowed nothing.
 */
export const DEV_ACCOUNTS: readonly DevAccount[] = [
  { sub: 'dev-alice', email: 'alice@example.com', name: 'Alice Approver', groups: ['approvers'] },
  { sub: 'dev-bob', email: 'bob@example.com', name: 'Bob Finance', groups: ['finance'] },
  {
    sub: 'dev-carol',
    email: 'carol@example.com',
    name: 'Carol Controller',
    groups: ['approvers', 'finance'],
  },
  {
    sub: 'dev-olivia',
    email: 'olivia@example.com',
    name: 'Olivia Operator',
    groups: ['operators'],
  },
  { sub: 'dev-nora', email: 'nobody@example.com', name: 'Nora Nogroup', groups: [] },
];

const accountSchema = z.strictObject({
  sub: z.string().min(1).max(255),
  email: z.email(),
  name: z.string().min(1).max(200),
  groups: z.array(z.string().min(1).max(200)),
});

/** Accounts given to the provider: each valid, and no subject or email (any case) twice. */
export const accountsSchema = z
  .array(accountSchema)
  .min(1)
  .superRefine((accounts, ctx) => {
    const seen = { sub: new Set<string>(), email: new Set<string>() };
    for (const [index, account] of accounts.entries()) {
      for (const [field, value] of [
        ['sub', account.sub],
        ['email', account.email.toLowerCase()],
      ] as const) {
        if (seen[field].has(value)) {
          ctx.addIssue({ code: 'custom', path: [index, field], message: `${field} is repeated` });
        }
        seen[field].add(value);
      }
    }
  });

/** The account signing in with this email, whatever its case and surrounding blanks. */
export function accountByEmail(
  accounts: readonly DevAccount[],
  email: string,
): DevAccount | undefined {
  const wanted = email.trim().toLowerCase();
  return accounts.find((account) => account.email.toLowerCase() === wanted);
}
