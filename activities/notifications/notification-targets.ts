import type { Db } from '../../infra/database/client.js';
import { notificationChannelKinds } from '../db/notification-channels.js';
import { optOutsOf } from '../db/notification-opt-outs.js';
import { routingRoutes } from '../db/notification-routes.js';
import { peopleInGroups } from '../db/people.js';
import { listRoleMappings } from '../db/role-mappings.js';
import { GROUP_PREFIX, PERSON_PREFIX, mappingAsEntry, normalAudience } from './audience.js';
import { routeNotifications, type NotificationTarget } from './routing.js';

export type { NotificationTarget } from './routing.js';

/**
 * Whom to tell of a held call, and through what (README "Tell approvers where they work"): the
 * environment's routes, channels, people and opt-outs as they are now, read here, then
 * `routeNotifications`. Nothing secret is in the answer (a Teams webhook is named by its route:
 * open it with `teamsWebhookUrl`), so it may travel through Temporal. An environment with no
 * routes or no channel costs one round trip and answers none.
 *
 * @param approval `requested_from` as the approval recorded it; empty asks any approver.
 */
export async function notificationTargets(
  sql: Db,
  environmentId: string,
  approval: { id: string; requested_from: readonly string[] },
): Promise<NotificationTarget[]> {
  const anyApprover = approval.requested_from.length === 0;
  const [routes, channels, mappings] = await Promise.all([
    routingRoutes(sql, environmentId),
    notificationChannelKinds(sql, environmentId),
    anyApprover ? listRoleMappings(sql, environmentId) : Promise.resolve([]),
  ]);
  if (routes.length === 0 || channels.length === 0) return [];
  const approverMappings = mappings
    .filter((mapping) => mapping.roles.includes('approver'))
    .map((mapping) => mapping.group);
  const entries = (
    anyApprover ? approverMappings.map(mappingAsEntry) : approval.requested_from
  ).map(normalAudience);
  const groups = entries
    .filter((entry) => entry.startsWith(GROUP_PREFIX))
    .map((entry) => entry.slice(GROUP_PREFIX.length));
  const people = await peopleInGroups(sql, groups);
  const emails = [
    ...people.map((person) => person.email),
    ...entries
      .filter((entry) => entry.startsWith(PERSON_PREFIX))
      .map((entry) => entry.slice(PERSON_PREFIX.length)),
    // A fixed address may be an opted-out person's own.
    ...routes.flatMap((route) => (route.target.type === 'address' ? [route.target.address] : [])),
  ];
  const optOuts = await optOutsOf(sql, environmentId, emails);
  return routeNotifications({
    approvalId: approval.id,
    requestedFrom: approval.requested_from,
    approverMappings,
    channels,
    routes,
    people,
    optOuts,
  });
}
