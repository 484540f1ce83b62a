import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Everything local runs keep lives here: Postgres, Temporal's SQLite file, the demo app. */
export const dataDir = path.resolve(process.env.GATEHOUSE_DATA_DIR ?? path.join(repoRoot, '.data'));

const identityProviderSchema = z.object({
  port: z.number().int(),
  clientId: z.string(),
  clientSecret: z.string(),
});

/** The mail catcher's SMTP and web ports (the conventional 1025 and 1080 of mail catchers). */
const mailCatcherSchema = z.object({ smtpPort: z.number().int(), webPort: z.number().int() });

/**
 * The generated settings of the local stack, made once and kept so a restart finds the same
 * database password, encryption key, demo-app client, sign-in provider client and ports. It holds
 * local secrets, so the file is private to its owner and `.data/` is ignored by git.
 */
const stateSchema = z.object({
  postgres: z.object({ port: z.number().int(), password: z.string() }),
  encryptionKey: z.string(),
  /** The Ed25519 seed that signs audit checkpoints; added to older state files on load. */
  auditSigningKey: z.string().optional(),
  temporal: z.object({ port: z.number().int(), uiPort: z.number().int() }),
  api: z.object({ port: z.number().int() }),
  demoApp: z.object({ port: z.number().int(), clientId: z.string(), clientSecret: z.string() }),
  /** The dev sign-in provider's port and the console's client there; added to older files on load. */
  identityProvider: identityProviderSchema.optional(),
  /** The mail catcher's preferred ports; added to older files on load. */
  mailCatcher: mailCatcherSchema.optional(),
  /** The single full key that earlier versions printed; kept so their state files still load. */
  developmentKey: z.string().optional(),
  /** Separation of duties: the key that calls, and the key that decides and writes policy. */
  agentKey: z.string().optional(),
  adminKey: z.string().optional(),
});

/** The state file as read: fields added since may be missing from an older one. */
export type StoredLocalState = z.infer<typeof stateSchema>;

/** The state a start works with: what a start adds to an older file is there. */
export type LocalState = StoredLocalState & {
  identityProvider: z.infer<typeof identityProviderSchema>;
  mailCatcher: z.infer<typeof mailCatcherSchema>;
};

const stateFile = path.join(dataDir, 'local-state.json');

/** The sign-in provider's port after the demo app's, and the console's client secret. */
function freshIdentityProvider(): LocalState['identityProvider'] {
  return {
    port: 4011,
    clientId: 'gatehouse-dev-console',
    clientSecret: randomBytes(24).toString('base64url'),
  };
}

function freshMailCatcher(): LocalState['mailCatcher'] {
  return { smtpPort: 1025, webPort: 1080 };
}

function fresh(): LocalState {
  return {
    postgres: { port: 5433, password: randomBytes(18).toString('base64url') },
    encryptionKey: randomBytes(32).toString('base64'),
    auditSigningKey: randomBytes(32).toString('base64'),
    temporal: { port: 7233, uiPort: 8233 },
    api: { port: 3000 },
    demoApp: {
      port: 4010,
      clientId: 'gatehouse-dev',
      clientSecret: randomBytes(24).toString('base64url'),
    },
    identityProvider: freshIdentityProvider(),
    mailCatcher: freshMailCatcher(),
  };
}

export async function readLocalState(): Promise<StoredLocalState | null> {
  try {
    return stateSchema.parse(JSON.parse(await readFile(stateFile, 'utf8')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(
      `${stateFile} is unreadable (${(error as Error).message}); delete it to start afresh`,
      { cause: error },
    );
  }
}

export async function loadOrCreateLocalState(): Promise<LocalState> {
  const state = await readLocalState();
  if (state === null) return saveLocalState(fresh());
  const { auditSigningKey, identityProvider, mailCatcher } = state;
  if (auditSigningKey && identityProvider && mailCatcher) {
    return { ...state, identityProvider, mailCatcher };
  }
  // Written by an older version: what it lacks is made once and kept from now on.
  return saveLocalState({
    ...state,
    auditSigningKey: auditSigningKey || randomBytes(32).toString('base64'),
    identityProvider: identityProvider ?? freshIdentityProvider(),
    mailCatcher: mailCatcher ?? freshMailCatcher(),
  });
}

export async function saveLocalState<State extends StoredLocalState>(state: State): Promise<State> {
  await mkdir(dataDir, { recursive: true });
  const temp = `${stateFile}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, stateFile);
  return state;
}
