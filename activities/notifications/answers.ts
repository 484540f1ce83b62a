import type { NotificationChannelView } from '../db/notification-channels.js';
import type { NotificationOptOut } from '../db/notification-opt-outs.js';
import type { NotificationRoute } from '../db/notification-routes.js';
import type { NotificationKind } from './kinds.js';
import { presentTarget } from './route-input.js';

/**
 * Channels, routes and opt-outs as the API answers them, the CLI prints them with `--json` and the
 * audit log records a change of them: one shape, with every secret only as `<field>_set`.
 */
export type ChannelAnswer = { updated_at: string; updated_by: string } & (
  | {
      kind: 'email';
      host: string;
      port: number;
      security: 'starttls' | 'tls' | 'none';
      username: string | null;
      password_set: boolean;
      sender_address: string;
      sender_name: string | null;
    }
  | { kind: 'slack'; bot_token_set: true; signing_secret_set: true; api_base_url: string }
  | { kind: 'teams' }
);

export function channelAnswer(channel: NotificationChannelView): ChannelAnswer {
  const common = { updated_at: channel.updatedAt.toISOString(), updated_by: channel.updatedBy };
  switch (channel.kind) {
    case 'email':
      return {
        kind: 'email',
        host: channel.host,
        port: channel.port,
        security: channel.security,
        username: channel.username,
        password_set: channel.passwordSet,
        sender_address: channel.senderAddress,
        sender_name: channel.senderName,
        ...common,
      };
    case 'slack':
      return {
        kind: 'slack',
        bot_token_set: true,
        signing_secret_set: true,
        api_base_url: channel.apiBaseUrl,
        ...common,
      };
    case 'teams':
      return { kind: 'teams', ...common };
  }
}

export interface RoutesAnswer {
  audience: string;
  kind: NotificationKind;
  targets: ReturnType<typeof presentTarget>[];
}

/** Routes grouped by audience and channel, in the order they are listed. */
export function routesAnswer(routes: readonly NotificationRoute[]): RoutesAnswer[] {
  const grouped: RoutesAnswer[] = [];
  for (const route of routes) {
    const last = grouped.at(-1);
    if (last?.audience === route.audience && last.kind === route.kind) {
      last.targets.push(presentTarget(route.target));
    } else {
      grouped.push({
        audience: route.audience,
        kind: route.kind,
        targets: [presentTarget(route.target)],
      });
    }
  }
  return grouped;
}

export interface OptOutAnswer {
  email: string;
  kind: NotificationKind;
  created_at: string;
  created_by: string;
}

export function optOutAnswer(optOut: NotificationOptOut): OptOutAnswer {
  return {
    email: optOut.email,
    kind: optOut.kind,
    created_at: optOut.createdAt.toISOString(),
    created_by: optOut.createdBy,
  };
}
