import {
  deleteWebhookEndpoint,
  findWebhookEndpointView,
  setWebhookEndpoint,
  type WebhookEndpointView,
} from '../../activities/db/webhook-endpoints.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { endpointAddressProblem } from '../../activities/webhooks/endpoint-address.js';
import { webhookEndpointInput } from '../../activities/webhooks/endpoint-input.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';
import { loadConfig, type Config } from '../config.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';

/**
 * Recorded as `updated_by`, where the API records the key's agent id; no key agent is recorded,
 * so the decision links delivered there decide any agent's calls (README, "Decision links").
 */
const CLI_ACTOR = 'cli';

export interface SetWebhookOptions {
  env: string;
  url: string;
  secret?: string;
}

/**
 * The encryption key and address rule of the API and worker, so a secret sealed here opens in
 * the worker: from the environment as theirs are, or, for the local stack of `gatehouse dev`
 * (no DATABASE_URL), its generated key and its acceptance of local receivers.
 */
export async function webhookSettings(): Promise<Pick<Config, 'encryption' | 'webhooks'>> {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const config = loadConfig({
    ...(local ? { ENCRYPTION_KEY: local.encryptionKey, WEBHOOK_ALLOW_PRIVATE: 'true' } : {}),
    ...process.env,
    // Only the encryption and webhook settings are read here; the database is withCliDatabase's.
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://local',
  });
  return { encryption: config.encryption, webhooks: config.webhooks };
}

async function environmentId(sql: Sql, name: string): Promise<string> {
  const environment = await findEnvironmentByName(sql, name);
  if (!environment) throw new Error(`no environment "${name}"`);
  return environment.id;
}

function describe(endpoint: WebhookEndpointView): string[] {
  return [
    `url       ${endpoint.url}`,
    `updated   ${endpoint.updatedAt.toISOString()} by ${endpoint.updatedBy}`,
    `audit     ${endpoint.auditEvents ? `audit.event on, delivered up to cursor ${endpoint.auditDeliveredSeq ?? '-'}` : 'off'}`,
  ];
}

export async function setWebhookCommand(
  sql: Sql,
  settings: Pick<Config, 'encryption' | 'webhooks'>,
  options: SetWebhookOptions,
): Promise<string> {
  const input = webhookEndpointInput.safeParse({
    url: options.url,
    secret: options.secret ?? generateWebhookSecret(),
  });
  if (!input.success) {
    throw new Error(input.error.issues.map((i) => `--${i.path.join('.')} ${i.message}`).join('; '));
  }
  const problem = await endpointAddressProblem(input.data.url, settings.webhooks.allowPrivate);
  if (problem) throw new Error(`--url ${problem} (WEBHOOK_ALLOW_PRIVATE=true allows it)`);
  const id = await environmentId(sql, options.env);
  // Audit delivery is turned on and off through the API, which starts its workflow (the CLI has
  // no Temporal connection): a CLI change of URL or secret leaves it as it is.
  const current = await findWebhookEndpointView(sql, settings.encryption, id);
  const endpoint = await setWebhookEndpoint(
    sql,
    settings.encryption,
    id,
    { url: input.data.url, secret: input.data.secret, auditEvents: current?.auditEvents ?? false },
    CLI_ACTOR,
  );
  const lines = [`webhook endpoint of ${options.env} set`, ...describe(endpoint)];
  if (options.secret) return [...lines, `secret    …${endpoint.secretHint}`].join('\n');
  return [
    ...lines,
    `secret    ${input.data.secret}`,
    'Store the secret now: it is shown only once. Receivers verify deliveries with it.',
  ].join('\n');
}

export async function showWebhookCommand(
  sql: Sql,
  settings: Pick<Config, 'encryption'>,
  env: string,
): Promise<string> {
  const endpoint = await findWebhookEndpointView(
    sql,
    settings.encryption,
    await environmentId(sql, env),
  );
  if (!endpoint) return '(no webhook endpoint)';
  return [...describe(endpoint), `secret    …${endpoint.secretHint}`].join('\n');
}

export async function removeWebhookCommand(sql: Sql, env: string): Promise<string> {
  if (!(await deleteWebhookEndpoint(sql, await environmentId(sql, env)))) {
    throw new Error(`no webhook endpoint in environment "${env}"`);
  }
  return `removed the webhook endpoint of ${env}`;
}
