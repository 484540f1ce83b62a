import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Db, Sql } from '../../infra/database/client.js';
import { open, seal, type Keyring } from '../../infra/encryption.js';
import type { NotificationKind } from '../notifications/kinds.js';
import type { NotificationSetter } from './notification-channels.js';
import type { RoutingRoute } from '../notifications/routing.js';

/** Where a route sends, as answers show it: a Teams webhook by its host only. */
export type RouteTargetView =
  | { type: 'each_person' }
  | { type: 'address'; address: string }
  | { type: 'slack_channel'; channel: string }
  | { type: 'webhook'; host: string };

/** Where a route sends, as it is set: a Teams webhook by its whole URL, which is sealed. */
export type RouteTargetInput =
  | { type: 'each_person' }
  | { type: 'address'; address: string }
  | { type: 'slack_channel'; channel: string }
  | { type: 'webhook'; url: string };

export interface NotificationRoute {
  id: string;
  audience: string;
  kind: NotificationKind;
  target: RouteTargetView;
  updatedAt: Date;
  updatedBy: string;
  /** The agent of the API key that set it last; null when the CLI did. */
  keyAgentId: string | null;
}

interface Row {
  id: string;
  audience: string;
  kind: NotificationKind;
  target: RouteTargetView['type'];
  value: string | null;
  destination: string;
  updatedAt: Date;
  updatedBy: string;
  keyAgentId: string | null;
}

// Binds a sealed webhook URL to its route: copied to another row, it does not open.
const webhookAad = (routeId: string) => `notification_route:${routeId}:webhook_url`;

/**
 * The target in one comparable form: two routes of an audience and kind to the same place are one
 * route, and the senders send one message per destination. A webhook URL by its SHA-256 (the URL
 * carries a signature of 256 random bits, so its digest gives nothing away).
 */
export function routeDestination(target: RouteTargetInput): string {
  switch (target.type) {
    case 'each_person':
      return 'each_person';
    case 'address':
      return target.address.toLowerCase();
    case 'slack_channel':
      return target.channel;
    case 'webhook':
      return `sha256:${createHash('sha256').update(target.url, 'utf8').digest('hex')}`;
  }
}

function targetView(row: Row): RouteTargetView {
  switch (row.target) {
    case 'each_person':
      return { type: 'each_person' };
    case 'address':
      return { type: 'address', address: row.value ?? '' };
    case 'slack_channel':
      return { type: 'slack_channel', channel: row.value ?? '' };
    case 'webhook':
      return { type: 'webhook', host: row.value ?? '' };
  }
}

const columns = (sql: Db) =>
  sql`id, audience, kind, target, value, destination, updated_at, updated_by, key_agent_id`;

const ORDER = (sql: Db) => sql`
  order by audience, array_position(array['email', 'slack', 'teams'], kind),
    array_position(array['each_person', 'address', 'slack_channel', 'webhook'], target), value, id`;

/** The environment's routes, by audience, kind and target. */
export async function listNotificationRoutes(
  sql: Db,
  environmentId: string,
): Promise<NotificationRoute[]> {
  const rows = await sql<Row[]>`
    select ${columns(sql)} from notification_routes where environment_id = ${environmentId}
    ${ORDER(sql)}`;
  return rows.map((row) => ({
    id: row.id,
    audience: row.audience,
    kind: row.kind,
    target: targetView(row),
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
    keyAgentId: row.keyAgentId,
  }));
}

/** The environment's routes as the routing reads them: no secret, a webhook by its digest. */
export async function routingRoutes(sql: Db, environmentId: string): Promise<RoutingRoute[]> {
  const rows = await sql<Row[]>`
    select ${columns(sql)} from notification_routes where environment_id = ${environmentId}`;
  return rows.map((row) => ({
    id: row.id,
    audience: row.audience,
    kind: row.kind,
    keyAgentId: row.keyAgentId,
    target:
      row.target === 'webhook'
        ? { type: 'webhook', destination: row.destination }
        : row.target === 'address'
          ? { type: 'address', address: row.value ?? '' }
          : row.target === 'slack_channel'
            ? { type: 'slack_channel', channel: row.value ?? '' }
            : { type: 'each_person' },
  }));
}

/**
 * Replaces the audience's routes of one kind with `targets` (none: it is told nothing that way),
 * in one transaction under a lock of that audience and kind, so two changes take turns. A target
 * already routed keeps its route (and id: a delivery that names a Teams webhook by its route still
 * finds it), now set by this setter; the others are removed.
 */
export async function replaceNotificationRoutes(
  sql: Sql,
  keyring: Keyring,
  environmentId: string,
  audience: string,
  kind: NotificationKind,
  targets: readonly RouteTargetInput[],
  setter: NotificationSetter,
): Promise<NotificationRoute[]> {
  const wanted = targets.map((target) => ({ target, destination: routeDestination(target) }));
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`notification-routes:${environmentId}:${audience}:${kind}`}))`;
    await tx`
      delete from notification_routes
      where environment_id = ${environmentId} and audience = ${audience} and kind = ${kind}
        and not (destination = any(${wanted.map((w) => w.destination)}::text[]))`;
    for (const { target, destination } of wanted) {
      const id = uuidv7();
      const value =
        target.type === 'address'
          ? target.address
          : target.type === 'slack_channel'
            ? target.channel
            : target.type === 'webhook'
              ? new URL(target.url).hostname
              : null;
      const sealedUrl =
        target.type === 'webhook' ? seal(keyring, target.url, webhookAad(id)) : null;
      await tx`
        insert into notification_routes (id, environment_id, audience, kind, target, value,
          webhook_url_sealed, destination, updated_by, key_agent_id)
        values (${id}, ${environmentId}, ${audience}, ${kind}, ${target.type}, ${value},
          ${sealedUrl}, ${destination}, ${setter.label}, ${setter.keyAgentId})
        on conflict (environment_id, audience, kind, destination) do update
          set updated_by = excluded.updated_by, key_agent_id = excluded.key_agent_id,
            updated_at = now()`;
    }
  });
  return (await listNotificationRoutes(sql, environmentId)).filter(
    (route) => route.audience === audience && route.kind === kind,
  );
}

/** Whether the audience has routes of this kind. */
export async function hasNotificationRoutes(
  sql: Db,
  environmentId: string,
  audience: string,
  kind: NotificationKind,
): Promise<boolean> {
  const [row]: [{ exists: boolean }?] = await sql`
    select exists (select 1 from notification_routes
      where environment_id = ${environmentId} and audience = ${audience} and kind = ${kind})`;
  return row?.exists ?? false;
}

/**
 * The Teams webhook URL of a route (a target's `teamsWebhookRef`), open, for the sender: null
 * when the route is gone (replaced or removed since), or is no Teams route of the environment.
 */
export async function teamsWebhookUrl(
  sql: Db,
  keyring: Keyring,
  environmentId: string,
  ref: string,
): Promise<string | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref)) return null;
  const [row]: [{ webhookUrlSealed: string }?] = await sql`
    select webhook_url_sealed from notification_routes
    where id = ${ref} and environment_id = ${environmentId} and kind = 'teams'`;
  return row ? open(keyring, row.webhookUrlSealed, webhookAad(ref)) : null;
}

/** The host of a Teams route's webhook, as the route shows it (for the approval record). */
export async function teamsWebhookHost(
  sql: Db,
  environmentId: string,
  ref: string,
): Promise<string | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref)) return null;
  const [row]: [{ value: string | null }?] = await sql`
    select value from notification_routes
    where id = ${ref} and environment_id = ${environmentId} and kind = 'teams'`;
  return row?.value ?? null;
}
