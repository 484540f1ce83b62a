import {
  listNotificationChannels,
  setNotificationChannel,
  type NotificationSetter,
} from '../../activities/db/notification-channels.js';
import {
  listNotificationRoutes,
  replaceNotificationRoutes,
} from '../../activities/db/notification-routes.js';
import { EVERYONE_ASKED } from '../../activities/notifications/audience.js';
import type { Sql } from '../database/client.js';
import type { Keyring } from '../encryption.js';

/** Who set what `gatehouse dev` sets: no key's agent (agent ids have no space), as the CLI. */
export const DEV_MAIL_SETTER: NotificationSetter = { label: 'gatehouse dev', keyAgentId: null };

/** The sender of the development environment's approval e-mails. */
export const DEV_MAIL_SENDER = {
  address: 'approvals@gatehouse.localhost',
  name: 'Gatehouse (gatehouse dev)',
} as const;

/**
 * The approvers' shared mailbox of the development environment, as a team has one. People are
 * known to Gatehouse only once they sign in to the console, so before anyone has, a call held for
 * any approver reaches nobody by their own address: this one is told of every held call.
 */
export const DEV_APPROVERS_MAILBOX = 'approvers@gatehouse.localhost';

/** Where the development environment's approval e-mails go after a start. */
export type DevMailChannel =
  /** To the catcher: set now, or set by an earlier start and pointed at this one's port. */
  | { to: 'catcher' }
  /** To a relay someone else set (an operator, a key): left as it is. */
  | { to: 'own relay'; host: string; port: number };

/**
 * Points the environment's e-mail channel at the mail catcher when it has none, so approval
 * e-mails can be read on the machine. A channel that an earlier start set is moved to this start's
 * port (a taken port is replaced); one set by anyone else is theirs, and left alone. The first
 * time, when the environment has no e-mail route either, everyone asked is told by e-mail (audience
 * `*`) at their own address and in the approvers' mailbox, so every held call e-mails someone at
 * once, even before anybody has signed in; a route someone set is kept.
 */
export async function seedDevMailChannel(
  sql: Sql,
  keyring: Keyring,
  environmentId: string,
  smtpPort: number,
): Promise<DevMailChannel> {
  const channels = await listNotificationChannels(sql, environmentId);
  const email = channels.find((channel) => channel.kind === 'email');
  if (email && email.updatedBy !== DEV_MAIL_SETTER.label) {
    return { to: 'own relay', host: email.host, port: email.port };
  }
  if (!email || email.host !== '127.0.0.1' || email.port !== smtpPort) {
    const set = await setNotificationChannel(
      sql,
      keyring,
      environmentId,
      {
        kind: 'email',
        host: '127.0.0.1',
        port: smtpPort,
        security: 'none',
        username: null,
        password: null,
        senderAddress: DEV_MAIL_SENDER.address,
        senderName: DEV_MAIL_SENDER.name,
      },
      DEV_MAIL_SETTER,
    );
    if (set.outcome !== 'set') throw new Error(`the mail catcher's channel: ${set.why}`);
  }
  if (!email) {
    const routes = await listNotificationRoutes(sql, environmentId);
    if (!routes.some((route) => route.kind === 'email')) {
      await replaceNotificationRoutes(
        sql,
        keyring,
        environmentId,
        EVERYONE_ASKED,
        'email',
        [{ type: 'each_person' }, { type: 'address', address: DEV_APPROVERS_MAILBOX }],
        DEV_MAIL_SETTER,
      );
    }
  }
  return { to: 'catcher' };
}
