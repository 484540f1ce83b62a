import { createApiKey } from '../../activities/db/api-keys.js';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { readTokens, saveAuthorizedConnection } from '../../activities/db/connections.js';
import type { BenchStack } from './stack.js';

/** Who holds calls in the held-calls scenario, made straight in Postgres. */
export interface HeldCast {
  /** External ids of the users the calls are for. */
  users: string[];
  /** Standard keys of the agents that make the calls, governed by the default policy. */
  agentKeys: string[];
  /** The agent whose calls expire: governed by a policy of its own with a short ttl. */
  expiring: { agentId: string; key: string };
}

const AGENTS = 10;

/**
 * `users` connected users, each with a connection to the demo app, and the agents' keys.
 * The connect flow itself is measured elsewhere; here the users get copies of the bench user's
 * tokens, sealed for their own connection rows, so a thousand users take seconds. They all act
 * as the bench user's demo account, whose task list is then where every write of the scenario
 * lands: counting it per title is how "ran exactly once" is checked.
 */
export async function seedHeldCast(
  stack: BenchStack,
  users: number,
  expiringTtlSeconds: number,
): Promise<HeldCast> {
  const { sql } = stack;
  const keyring = stack.config.encryption;
  const [source]: [
    | {
        environmentId: string;
        environmentName: string;
        authConfigId: string | null;
        grantedScopes: string[];
        providerScopes: string[];
      }
    | undefined,
  ] = await sql`
    select c.environment_id, e.name as environment_name, c.auth_config_id, c.granted_scopes,
      c.provider_scopes
    from connections c join environments e on e.id = c.environment_id
    where c.id = ${stack.connectionId}`;
  const tokens = await readTokens(sql, keyring, stack.connectionId);
  if (!source || !tokens) throw new Error('the bench user has no connection to copy');
  const { environmentId, environmentName } = source;

  const ids = Array.from({ length: users }, (_, i) => `u_held_${String(i)}`);
  // A few at a time: the pool is shared with the API's and the worker's own connections.
  for (let i = 0; i < ids.length; i += 20) {
    await Promise.all(
      ids.slice(i, i + 20).map(async (externalId) => {
        const user = await upsertConnectedUser(sql, environmentId, externalId, undefined);
        await sql.begin((tx) =>
          saveAuthorizedConnection(tx, keyring, {
            environmentId,
            connectedUserId: user.id,
            app: 'acme',
            authConfigId: source.authConfigId,
            tokens,
            grantedScopes: source.grantedScopes,
            providerScopes: source.providerScopes,
          }),
        );
      }),
    );
  }

  const keyOf = async (agentId: string) =>
    (
      await createApiKey(sql, {
        environmentId,
        environmentName,
        name: agentId,
        access: 'standard',
        agentId,
      })
    ).key;
  const agentKeys: string[] = [];
  for (let i = 0; i < AGENTS; i++) agentKeys.push(await keyOf(`held-agent-${String(i)}`));
  const expiring = { agentId: 'held-expiring-agent', key: await keyOf('held-expiring-agent') };

  // Written as an operator writes it, through the API with a full key.
  const response = await fetch(`${stack.config.api.publicUrl}/v1/policies/held-expiring`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${stack.approverKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      agents: [expiring.agentId],
      defaults: { read: 'allow', write: 'ask', destructive: 'ask' },
      approval: { ttl_seconds: expiringTtlSeconds },
    }),
  });
  if (response.status !== 200) {
    throw new Error(`the expiring agent's policy was refused: ${await response.text()}`);
  }
  return { users: ids, agentKeys, expiring };
}
