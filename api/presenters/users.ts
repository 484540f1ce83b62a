import { z } from 'zod';
import type { ConnectedUserSummary } from '../../activities/db/connected-users.js';
import { iso, optionalTimestamp, timestamp } from './timestamps.js';

const common = {
  id: z.string().meta({ description: 'Gatehouse’s id for the user' }),
  external_id: z.string().meta({ description: 'Your own id for the user: `{user}` in paths' }),
  customer: z.string().nullable().meta({ description: 'Customer label, null until one is given' }),
  connection_count: z.int().meta({ description: 'Connections that are not revoked' }),
  last_active_at: optionalTimestamp.meta({ description: 'Time of the user’s last call' }),
};

export const userListItemSchema = z
  .object({
    ...common,
    calls_7d: z.int().meta({ description: 'Calls in the last 7 days' }),
  })
  .meta({ id: 'ConnectedUserListItem' });

export const userSchema = z
  .object({
    ...common,
    environment: z.string().meta({ description: 'Name of the environment' }),
    created_at: timestamp,
  })
  .meta({ id: 'ConnectedUser' });

export function presentUserListItem(
  user: ConnectedUserSummary,
): z.infer<typeof userListItemSchema> {
  return {
    id: user.id,
    external_id: user.externalId,
    customer: user.customer,
    connection_count: user.connectionCount,
    calls_7d: user.calls7d,
    last_active_at: iso(user.lastActiveAt),
  };
}

export function presentUser(
  user: ConnectedUserSummary,
  environmentName: string,
): z.infer<typeof userSchema> {
  return {
    id: user.id,
    external_id: user.externalId,
    customer: user.customer,
    connection_count: user.connectionCount,
    last_active_at: iso(user.lastActiveAt),
    environment: environmentName,
    created_at: iso(user.createdAt),
  };
}
