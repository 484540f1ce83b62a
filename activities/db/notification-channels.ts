import type { Db, Sql } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import type { NotificationKind } from '../notifications/kinds.js';

export type SmtpSecurity = 'starttls' | 'tls' | 'none';

/** What answers show of a channel: every setting but its secrets, which show only as set. */
export type NotificationChannelView = {
  updatedAt: Date;
  updatedBy: string;
  /** The agent of the API key that set it; null when the CLI did. */
  keyAgentId: string | null;
} & (
  | {
      kind: 'email';
      host: string;
      port: number;
      security: SmtpSecurity;
      username: string | null;
      passwordSet: boolean;
      senderAddress: string;
      senderName: string | null;
    }
  | { kind: 'slack'; botTokenSet: true; signingSecretSet: true; apiBaseUrl: string }
  | { kind: 'teams' }
);

/**
 * A channel as it is set. A secret left `undefined` keeps the stored one, but only where it would
 * go where it went before (the same SMTP host, the same Slack API): pointing a channel elsewhere
 * with its stored secret would hand that secret to whoever answers there.
 */
export type NotificationChannelInput =
  | {
      kind: 'email';
      host: string;
      port: number;
      security: SmtpSecurity;
      username: string | null;
      /** null: none; undefined: keep the stored one. */
      password: string | null | undefined;
      senderAddress: string;
      senderName: string | null;
    }
  | {
      kind: 'slack';
      botToken: string | undefined;
      signingSecret: string | undefined;
      apiBaseUrl: string;
    }
  | { kind: 'teams' };

/** The channels' settings with their secrets open: for the senders, never for an answer. */
export interface EmailRelay {
  /** The agent of the key that set the relay; null when the CLI did. */
  keyAgentId: string | null;
  host: string;
  port: number;
  security: SmtpSecurity;
  username: string | null;
  password: string | null;
  senderAddress: string;
  senderName: string | null;
}

export interface SlackApp {
  /** The agent of the key that set the app; null when the CLI did. */
  keyAgentId: string | null;
  botToken: string;
  signingSecret: string;
  apiBaseUrl: string;
}

interface Row {
  kind: NotificationKind;
  smtpHost: string | null;
  smtpPort: number | null;
  smtpSecurity: SmtpSecurity | null;
  smtpUsername: string | null;
  smtpPasswordSealed: string | null;
  senderAddress: string | null;
  senderName: string | null;
  slackBotTokenSealed: string | null;
  slackSigningSecretSealed: string | null;
  slackApiBaseUrl: string | null;
  updatedAt: Date;
  updatedBy: string;
  keyAgentId: string | null;
}

/**
 * Who sets a channel or a route: `label` is recorded as `updated_by` (a key's agent id, or `cli`);
 * `keyAgentId` is the key's agent, null for the CLI: decision links sent through what a key chose
 * never decide that agent's own calls.
 */
export interface NotificationSetter {
  label: string;
  keyAgentId: string | null;
}

/** Binds a sealed secret to its environment, kind and field: copied elsewhere, it does not open. */
const secretAad = (environmentId: string, kind: NotificationKind, field: string) =>
  `notification_channel:${environmentId}:${kind}:${field}`;

const columns = (sql: Db) => sql`
  kind, smtp_host, smtp_port, smtp_security, smtp_username, smtp_password_sealed, sender_address,
  sender_name, slack_bot_token_sealed, slack_signing_secret_sealed, slack_api_base_url,
  updated_at, updated_by, key_agent_id`;

function view(row: Row): NotificationChannelView {
  const common = {
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
    keyAgentId: row.keyAgentId,
  };
  switch (row.kind) {
    case 'email':
      return {
        ...common,
        kind: 'email',
        host: row.smtpHost ?? '',
        port: row.smtpPort ?? 0,
        security: row.smtpSecurity ?? 'starttls',
        username: row.smtpUsername,
        passwordSet: row.smtpPasswordSealed !== null,
        senderAddress: row.senderAddress ?? '',
        senderName: row.senderName,
      };
    case 'slack':
      return {
        ...common,
        kind: 'slack',
        botTokenSet: true,
        signingSecretSet: true,
        apiBaseUrl: row.slackApiBaseUrl ?? '',
      };
    case 'teams':
      return { ...common, kind: 'teams' };
  }
}

/** The environment's channels, in the order email, slack, teams. */
export async function listNotificationChannels(
  sql: Db,
  environmentId: string,
): Promise<NotificationChannelView[]> {
  const rows = await sql<Row[]>`
    select ${columns(sql)} from notification_channels
    where environment_id = ${environmentId}
    order by array_position(array['email', 'slack', 'teams'], kind)`;
  return rows.map(view);
}

/** The kinds whose channel the environment has set. */
export async function notificationChannelKinds(
  sql: Db,
  environmentId: string,
): Promise<NotificationKind[]> {
  const rows = await sql<{ kind: NotificationKind }[]>`
    select kind from notification_channels where environment_id = ${environmentId}
    order by array_position(array['email', 'slack', 'teams'], kind)`;
  return rows.map((row) => row.kind);
}

export type SetChannelResult =
  | { outcome: 'set'; channel: NotificationChannelView }
  /** A secret must be given: none is stored, or the stored one would go somewhere else. */
  | { outcome: 'secret_required'; field: 'password' | 'bot_token' | 'signing_secret'; why: string };

/**
 * Sets the environment's channel of the input's kind, replacing every setting; secrets left out
 * are kept where that is safe (see NotificationChannelInput). One transaction holding the row's
 * lock, so the secret kept is the one stored when the decision to keep it was made.
 */
export async function setNotificationChannel(
  sql: Sql,
  keyring: Keyring,
  environmentId: string,
  input: NotificationChannelInput,
  setter: NotificationSetter,
): Promise<SetChannelResult> {
  return sql.begin(async (tx): Promise<SetChannelResult> => {
    await tx`select pg_advisory_xact_lock(hashtext(${`notification-channel:${environmentId}:${input.kind}`}))`;
    const [current]: [Row?] = await tx`
      select ${columns(tx)} from notification_channels
      where environment_id = ${environmentId} and kind = ${input.kind}`;
    const sealed = (field: string, value: string) =>
      seal(keyring, value, secretAad(environmentId, input.kind, field));
    let values: Omit<Row, 'updatedAt' | 'updatedBy' | 'keyAgentId' | 'kind'> = {
      smtpHost: null,
      smtpPort: null,
      smtpSecurity: null,
      smtpUsername: null,
      smtpPasswordSealed: null,
      senderAddress: null,
      senderName: null,
      slackBotTokenSealed: null,
      slackSigningSecretSealed: null,
      slackApiBaseUrl: null,
    };
    if (input.kind === 'email') {
      let password: string | null;
      if (input.password !== undefined) {
        password = input.password === null ? null : sealed('password', input.password);
      } else if (!current?.smtpPasswordSealed || input.username === null) {
        // Nothing stored to keep, or no user name left to send one with.
        password = null;
      } else if (current.smtpHost?.toLowerCase() !== input.host.toLowerCase()) {
        return {
          outcome: 'secret_required',
          field: 'password',
          why: 'give the password again: the host changed, and the stored password is never sent to another host',
        };
      } else {
        password = current.smtpPasswordSealed;
      }
      values = {
        ...values,
        smtpHost: input.host,
        smtpPort: input.port,
        smtpSecurity: input.security,
        smtpUsername: input.username,
        smtpPasswordSealed: password,
        senderAddress: input.senderAddress,
        senderName: input.senderName,
      };
    } else if (input.kind === 'slack') {
      const sameApi = current?.slackApiBaseUrl === input.apiBaseUrl;
      const kept = (given: string | undefined, stored: string | null | undefined, field: string) =>
        given !== undefined ? sealed(field, given) : sameApi ? (stored ?? null) : null;
      const botToken = kept(input.botToken, current?.slackBotTokenSealed, 'bot_token');
      const signingSecret = kept(
        input.signingSecret,
        current?.slackSigningSecretSealed,
        'signing_secret',
      );
      const missing = (field: 'bot_token' | 'signing_secret'): SetChannelResult => ({
        outcome: 'secret_required',
        field,
        why: current
          ? 'give it again: the API address changed, and the stored one is never sent to another'
          : 'is required: none is stored',
      });
      if (botToken === null) return missing('bot_token');
      if (signingSecret === null) return missing('signing_secret');
      values = {
        ...values,
        slackBotTokenSealed: botToken,
        slackSigningSecretSealed: signingSecret,
        slackApiBaseUrl: input.apiBaseUrl,
      };
    }
    const [row]: [Row?] = await tx`
      insert into notification_channels (environment_id, kind, smtp_host, smtp_port, smtp_security,
        smtp_username, smtp_password_sealed, sender_address, sender_name, slack_bot_token_sealed,
        slack_signing_secret_sealed, slack_api_base_url, updated_by, key_agent_id)
      values (${environmentId}, ${input.kind}, ${values.smtpHost}, ${values.smtpPort},
        ${values.smtpSecurity}, ${values.smtpUsername}, ${values.smtpPasswordSealed},
        ${values.senderAddress}, ${values.senderName}, ${values.slackBotTokenSealed},
        ${values.slackSigningSecretSealed}, ${values.slackApiBaseUrl}, ${setter.label},
        ${setter.keyAgentId})
      on conflict (environment_id, kind) do update set
        smtp_host = excluded.smtp_host, smtp_port = excluded.smtp_port,
        smtp_security = excluded.smtp_security, smtp_username = excluded.smtp_username,
        smtp_password_sealed = excluded.smtp_password_sealed,
        sender_address = excluded.sender_address, sender_name = excluded.sender_name,
        slack_bot_token_sealed = excluded.slack_bot_token_sealed,
        slack_signing_secret_sealed = excluded.slack_signing_secret_sealed,
        slack_api_base_url = excluded.slack_api_base_url,
        updated_by = excluded.updated_by, key_agent_id = excluded.key_agent_id,
        updated_at = now()
      returning ${columns(tx)}`;
    if (!row) throw new Error('notification channel upsert returned nothing');
    return { outcome: 'set', channel: view(row) };
  });
}

/** False when the environment had no channel of that kind. */
export async function deleteNotificationChannel(
  sql: Db,
  environmentId: string,
  kind: NotificationKind,
): Promise<boolean> {
  const rows = await sql`
    delete from notification_channels where environment_id = ${environmentId} and kind = ${kind}`;
  return rows.count > 0;
}

/**
 * The environment's channels with their secrets open, for the senders, which run in activities:
 * never returned by the API, never logged, never passed through Temporal.
 */
export async function openNotificationChannels(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
): Promise<{ email: EmailRelay | null; slack: SlackApp | null; teams: boolean }> {
  const rows = await sql<Row[]>`
    select ${columns(sql)} from notification_channels where environment_id = ${environmentId}`;
  const opened = (kind: NotificationKind, field: string, value: string) =>
    open(keyring, value, secretAad(environmentId, kind, field));
  const email = rows.find((row) => row.kind === 'email');
  const slack = rows.find((row) => row.kind === 'slack');
  return {
    email: email
      ? {
          keyAgentId: email.keyAgentId,
          host: email.smtpHost ?? '',
          port: email.smtpPort ?? 0,
          security: email.smtpSecurity ?? 'starttls',
          username: email.smtpUsername,
          password: email.smtpPasswordSealed
            ? opened('email', 'password', email.smtpPasswordSealed)
            : null,
          senderAddress: email.senderAddress ?? '',
          senderName: email.senderName,
        }
      : null,
    slack:
      slack?.slackBotTokenSealed && slack.slackSigningSecretSealed
        ? {
            keyAgentId: slack.keyAgentId,
            botToken: opened('slack', 'bot_token', slack.slackBotTokenSealed),
            signingSecret: opened('slack', 'signing_secret', slack.slackSigningSecretSealed),
            apiBaseUrl: slack.slackApiBaseUrl ?? '',
          }
        : null,
    teams: rows.some((row) => row.kind === 'teams'),
  };
}
