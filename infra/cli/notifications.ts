import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { v7 as uuidv7 } from 'uuid';
import type { NotificationActor } from '../../activities/audit/notification-changes.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { listNotificationChannels } from '../../activities/db/notification-channels.js';
import { listNotificationRoutes } from '../../activities/db/notification-routes.js';
import { normalAudience } from '../../activities/notifications/audience.js';
import {
  channelAnswer,
  routesAnswer,
  type ChannelAnswer,
  type RoutesAnswer,
} from '../../activities/notifications/answers.js';
import {
  changeNotificationChannel,
  changeNotificationOptOut,
  changeNotificationRoutes,
  removeNotificationChannel,
  type Issue,
  type NotificationSettings,
} from '../../activities/notifications/changes.js';
import {
  emailChannelBody,
  emailChannelInput,
  slackChannelBody,
  slackChannelInput,
} from '../../activities/notifications/channel-input.js';
import {
  KIND_LABELS,
  NOTIFICATION_KINDS,
  OPT_OUT_KINDS,
  type NotificationKind,
  type OptOutKind,
} from '../../activities/notifications/kinds.js';
import {
  audience as audienceSchema,
  optOutPath,
  setRoutesBody,
  type RouteTargetBody,
} from '../../activities/notifications/route-input.js';
import { loadConfig } from '../config.js';
import type { Sql } from '../database/client.js';
import { loadOrCreateLocalState } from '../dev/local-state.js';
import { listOutput } from './table.js';

/**
 * `gatehouse notifications …`: the channels, routes and opt-outs of the management API's
 * `/v1/notification-*`, through the same checked changes (activities/notifications/changes.ts),
 * recorded in the audit log as the command line's (`cli`, no key agent). Secrets come from a file
 * or standard input (`-`), never from an argument, which a shell would keep in its history and
 * other users could read in the process list.
 */

export interface NotificationsOptions {
  env: string;
  json?: boolean;
}

/**
 * The encryption key and address rule of the API and worker, so a secret sealed here opens in
 * the worker: from the environment as theirs are, or, for the local stack of `gatehouse dev` (no
 * DATABASE_URL), its generated key and its acceptance of local relays and stand-ins.
 */
export async function notificationSettings(): Promise<NotificationSettings> {
  const local = process.env.DATABASE_URL ? null : await loadOrCreateLocalState();
  const config = loadConfig({
    ...(local ? { ENCRYPTION_KEY: local.encryptionKey, NOTIFY_ALLOW_PRIVATE: 'true' } : {}),
    ...process.env,
    // Only the encryption and notification settings are read here.
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://local',
  });
  return { keyring: config.encryption, allowPrivate: config.notifications.allowPrivate };
}

async function actorIn(sql: Sql, env: string): Promise<NotificationActor> {
  const environment = await findEnvironmentByName(sql, env);
  if (!environment) throw new Error(`no environment "${env}"`);
  return {
    environmentId: environment.id,
    agentId: 'cli',
    channel: 'cli',
    traceId: `cli-${uuidv7()}`,
  };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A secret from a file, or from standard input for `-`: one line, its line ending dropped (as
 * `echo` or an editor leaves one).
 */
export async function readSecret(
  path: string,
  flag: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<string> {
  let text: string;
  try {
    text = path === '-' ? await readAll(stdin) : await readFile(path, 'utf8');
  } catch (error) {
    // An fs error's message names the cause and the path (ENOENT: no such file…).
    const reason =
      typeof error === 'object' && error !== null && 'message' in error
        ? String(error.message)
        : String(error);
    throw new Error(`${flag} ${path}: ${reason}`, { cause: error });
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '') throw new Error(`${flag} ${path === '-' ? 'standard input' : path} is empty`);
  if (/[\r\n]/.test(secret)) throw new Error(`${flag}: the secret must be one line`);
  return secret;
}

/** The flag each field of the API's bodies is given by here. */
const FLAGS: Record<string, string> = {
  host: '--host',
  port: '--port',
  security: '--security',
  username: '--username',
  password: '--password-file',
  sender_address: '--from',
  sender_name: '--from-name',
  bot_token: '--bot-token-file',
  signing_secret: '--signing-secret-file',
  api_base_url: '--api-base-url',
};

function refusal(issues: readonly Issue[], name: (path: string) => string): Error {
  return new Error(issues.map((issue) => `${name(issue.path)} ${issue.message}`).join('; '));
}

const flagOf = (path: string) => FLAGS[path] ?? path;

function describeChannel(channel: ChannelAnswer): string {
  switch (channel.kind) {
    case 'email':
      return `${channel.host}:${String(channel.port)} (${channel.security}), from ${channel.sender_name ? `${channel.sender_name} <${channel.sender_address}>` : channel.sender_address}, ${channel.username ? `user ${channel.username}, password ${channel.password_set ? 'set' : 'not set'}` : 'no authentication'}`;
    case 'slack':
      return `bot token set, signing secret set, API ${channel.api_base_url}`;
    case 'teams':
      return 'on (each route names its workflow webhook)';
  }
}

/** `gatehouse notifications channels list`. */
export async function listChannelsCommand(
  sql: Sql,
  options: NotificationsOptions,
): Promise<string> {
  const actor = await actorIn(sql, options.env);
  const channels = (await listNotificationChannels(sql, actor.environmentId)).map(channelAnswer);
  return listOutput(
    channels,
    [
      ['KIND', (channel) => channel.kind],
      ['SETTINGS', describeChannel],
      ['UPDATED', (channel) => `${channel.updated_at} by ${channel.updated_by}`],
    ],
    { ...options, empty: `(no notification channels in ${options.env})` },
  );
}

export interface EmailChannelOptions extends NotificationsOptions {
  host: string;
  port?: string;
  security?: string;
  username?: string;
  passwordFile?: string;
  from: string;
  fromName?: string;
}

export interface SlackChannelOptions extends NotificationsOptions {
  botTokenFile?: string;
  signingSecretFile?: string;
  apiBaseUrl?: string;
}

function parsed<T>(
  result:
    | { success: true; data: T }
    | { success: false; error: { issues: readonly { path: PropertyKey[]; message: string }[] } },
): T {
  if (result.success) return result.data;
  throw refusal(
    result.error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    })),
    flagOf,
  );
}

async function setChannel(
  sql: Sql,
  settings: NotificationSettings,
  options: NotificationsOptions,
  input: Parameters<typeof changeNotificationChannel>[3],
): Promise<string> {
  const result = await changeNotificationChannel(
    sql,
    settings,
    await actorIn(sql, options.env),
    input,
  );
  if (!result.ok) throw refusal(result.issues, flagOf);
  if (options.json) return JSON.stringify(result.value, null, 2);
  return `${KIND_LABELS[input.kind]} channel of ${options.env} set: ${describeChannel(result.value)}`;
}

/** `gatehouse notifications channels set email`. */
export async function setEmailChannelCommand(
  sql: Sql,
  settings: NotificationSettings,
  options: EmailChannelOptions,
): Promise<string> {
  if (options.passwordFile !== undefined && options.username === undefined) {
    throw new Error('--password-file needs --username: a password is sent with a user name');
  }
  const password =
    options.passwordFile === undefined
      ? undefined
      : await readSecret(options.passwordFile, '--password-file');
  const port = options.port === undefined ? undefined : Number(options.port);
  const body = parsed(
    emailChannelBody.safeParse({
      host: options.host,
      ...(port === undefined ? {} : { port }),
      ...(options.security === undefined ? {} : { security: options.security }),
      username: options.username ?? null,
      ...(options.username === undefined ? { password: null } : {}),
      ...(password === undefined ? {} : { password }),
      sender_address: options.from,
      sender_name: options.fromName ?? null,
    }),
  );
  return setChannel(sql, settings, options, emailChannelInput(body));
}

/** `gatehouse notifications channels set slack`. */
export async function setSlackChannelCommand(
  sql: Sql,
  settings: NotificationSettings,
  options: SlackChannelOptions,
): Promise<string> {
  if (options.botTokenFile === '-' && options.signingSecretFile === '-') {
    throw new Error(
      'only one of --bot-token-file and --signing-secret-file can read standard input',
    );
  }
  const botToken =
    options.botTokenFile === undefined
      ? undefined
      : await readSecret(options.botTokenFile, '--bot-token-file');
  const signingSecret =
    options.signingSecretFile === undefined
      ? undefined
      : await readSecret(options.signingSecretFile, '--signing-secret-file');
  const body = parsed(
    slackChannelBody.safeParse({
      ...(botToken === undefined ? {} : { bot_token: botToken }),
      ...(signingSecret === undefined ? {} : { signing_secret: signingSecret }),
      ...(options.apiBaseUrl === undefined ? {} : { api_base_url: options.apiBaseUrl }),
    }),
  );
  return setChannel(sql, settings, options, slackChannelInput(body));
}

/** `gatehouse notifications channels set teams`. */
export async function setTeamsChannelCommand(
  sql: Sql,
  settings: NotificationSettings,
  options: NotificationsOptions,
): Promise<string> {
  return setChannel(sql, settings, options, { kind: 'teams' });
}

/** The kind as typed: email, slack or teams. */
export function parseKind(value: string): NotificationKind {
  const kind = NOTIFICATION_KINDS.find((candidate) => candidate === value);
  if (!kind) throw new InvalidArgumentError(`must be one of ${NOTIFICATION_KINDS.join(', ')}.`);
  return kind;
}

/** The audience as typed (`group:finance`, `person:ada@example.com`, `*`), kept as the API keeps it. */
export function parseAudience(value: string): string {
  const result = audienceSchema.safeParse(value);
  if (!result.success) {
    throw new InvalidArgumentError(`${result.error.issues[0]?.message ?? 'is not valid'}.`);
  }
  return normalAudience(result.data);
}

/** `gatehouse notifications channels remove`. */
export async function removeChannelCommand(
  sql: Sql,
  kind: NotificationKind,
  options: NotificationsOptions,
): Promise<string> {
  if (!(await removeNotificationChannel(sql, await actorIn(sql, options.env), kind))) {
    throw new Error(`no ${kind} channel in environment "${options.env}"`);
  }
  return `removed the ${KIND_LABELS[kind]} channel of ${options.env}: its routes deliver nothing until it is set again`;
}

function describeTargets(routes: RoutesAnswer): string {
  if (routes.targets.length === 0) return 'nothing';
  return routes.targets
    .map((target) =>
      'each_person' in target
        ? 'each person'
        : 'address' in target
          ? target.address
          : 'slack_channel' in target
            ? `channel ${target.slack_channel}`
            : `webhook at ${target.webhook_host}`,
    )
    .join(', ');
}

/** `gatehouse notifications routes list`. */
export async function listRoutesCommand(sql: Sql, options: NotificationsOptions): Promise<string> {
  const actor = await actorIn(sql, options.env);
  const routes = routesAnswer(await listNotificationRoutes(sql, actor.environmentId));
  return listOutput(
    routes,
    [
      ['AUDIENCE', (route) => route.audience],
      ['KIND', (route) => route.kind],
      ['TARGETS', describeTargets],
    ],
    { ...options, empty: `(no notification routes in ${options.env})` },
  );
}

export interface SetRoutesOptions extends NotificationsOptions {
  webhookUrlFile?: string;
}

/** The word that stands for "no target" on the command line, where an empty list cannot be typed. */
const NO_TARGET = 'none';
const EACH_PERSON = 'each_person';

/**
 * `gatehouse notifications routes set`: replaces the audience's routes of one kind. Targets are
 * words: `each_person`, an e-mail address, a Slack channel id, or `none` alone; a Teams webhook
 * comes from `--webhook-url-file`, since its URL is a secret.
 */
export async function setRoutesCommand(
  sql: Sql,
  settings: NotificationSettings,
  audience: string,
  kind: NotificationKind,
  words: readonly string[],
  options: SetRoutesOptions,
): Promise<string> {
  const named = words.flatMap((word) => word.split(',')).filter((word) => word.trim() !== '');
  const none = named.length === 1 && named[0] === NO_TARGET;
  if (kind === 'teams' && named.length > 0 && !none) {
    throw new Error('Teams routes take --webhook-url-file (the URL is a secret), or none');
  }
  if (kind !== 'teams' && options.webhookUrlFile !== undefined) {
    throw new Error('--webhook-url-file is for teams routes');
  }
  if (!none && named.length === 0 && options.webhookUrlFile === undefined) {
    throw new Error(
      `name the targets (${EACH_PERSON}, an address or a channel id), or ${NO_TARGET}`,
    );
  }
  if (!none && named.includes(NO_TARGET)) throw new Error(`${NO_TARGET} stands alone`);
  const targets: RouteTargetBody[] = none
    ? []
    : named.map((word) =>
        word === EACH_PERSON
          ? { each_person: true as const }
          : kind === 'email'
            ? { address: word }
            : { slack_channel: word },
      );
  if (options.webhookUrlFile !== undefined && !none) {
    targets.push({ webhook_url: await readSecret(options.webhookUrlFile, '--webhook-url-file') });
  }
  const body = parsed(setRoutesBody.safeParse({ targets }));
  const result = await changeNotificationRoutes(
    sql,
    settings,
    await actorIn(sql, options.env),
    audience,
    kind,
    body,
  );
  if (!result.ok) {
    throw refusal(result.issues, (path) => {
      const index = Number(/^targets\.(\d+)/.exec(path)?.[1] ?? NaN);
      const target = targets[index];
      if (target?.webhook_url !== undefined) return '--webhook-url-file';
      return target ? `target "${named[index] ?? ''}"` : path;
    });
  }
  if (options.json) return JSON.stringify(result.value, null, 2);
  return `${audience} is told through ${KIND_LABELS[kind]} in ${options.env}: ${describeTargets(result.value)}`;
}

export interface OptOutOptions extends NotificationsOptions {
  undo?: boolean;
}

/** The kind a person can opt out of, as typed. */
export function parseOptOutKind(value: string): OptOutKind {
  const kind = OPT_OUT_KINDS.find((candidate) => candidate === value);
  if (!kind) {
    throw new InvalidArgumentError(
      `must be ${OPT_OUT_KINDS.join(' or ')} (Teams is told through shared channels only).`,
    );
  }
  return kind;
}

/** `gatehouse notifications opt-out`: a person out of a kind of channel, or back in with --undo. */
export async function optOutCommand(
  sql: Sql,
  email: string,
  kind: OptOutKind,
  options: OptOutOptions,
): Promise<string> {
  const path = optOutPath.safeParse({ email, kind });
  if (!path.success) throw new Error(`email ${path.error.issues[0]?.message ?? 'is not valid'}`);
  const who = path.data.email.toLowerCase();
  const optedOut = !options.undo;
  const changed = await changeNotificationOptOut(
    sql,
    await actorIn(sql, options.env),
    who,
    kind,
    optedOut,
  );
  const label = KIND_LABELS[kind];
  if (optedOut) {
    return changed
      ? `${who} is not told through ${label} in ${options.env} now`
      : `${who} had already opted out of ${label} in ${options.env}`;
  }
  if (!changed) throw new Error(`${who} had not opted out of ${label} in "${options.env}"`);
  return `${who} is told through ${label} in ${options.env} again`;
}
