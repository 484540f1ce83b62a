import { randomBytes } from 'node:crypto';
import {
  startDevIdentityProvider,
  type DevAccount,
  type DevClient,
  type DevIdentityProvider,
} from '../../infra/dev-idp/index.js';
import type { Stops } from './stops.js';

export interface TestIdentityProvider extends DevIdentityProvider {
  /** Its one client, the console under test: a fresh secret for each start. */
  client: DevClient;
}

/**
 * Starts the dev sign-in provider for a test file on a free loopback port, with one client
 * whose redirect URIs are the test's, and registers its stop with `stops` at once.
 */
export async function startTestIdentityProvider(
  stops: Stops,
  options: { redirectUris: string[]; clientId?: string; accounts?: readonly DevAccount[] },
): Promise<TestIdentityProvider> {
  const client: DevClient = {
    client_id: options.clientId ?? 'gatehouse-console-test',
    client_secret: randomBytes(24).toString('base64url'),
    redirect_uris: options.redirectUris,
  };
  const idp = stops.add(
    await startDevIdentityProvider({
      clients: [client],
      ...(options.accounts ? { accounts: options.accounts } : {}),
    }),
  );
  return { ...idp, client };
}

// The walk itself lives beside the provider, so the benchmark signs in with the same code.
export {
  signInAs,
  walkSignIn,
  type SignInOptions,
  type SignInOutcome,
} from '../../infra/dev-idp/scripted-sign-in.js';
