import { createHash } from 'node:crypto';
import {
  ANY_APPROVER_ADDRESSEE,
  EVERYONE_ASKED,
  GROUP_PREFIX,
  PERSON_PREFIX,
  mappingAsEntry,
  normalAudience,
} from './audience.js';
import { NOTIFICATION_KINDS, type NotificationKind } from './kinds.js';

/** Where a route sends, as the routing needs it (no secret: a Teams webhook by its route). */
export type RoutingTarget =
  | { type: 'each_person' }
  | { type: 'address'; address: string }
  | { type: 'slack_channel'; channel: string }
  /** `destination`: the webhook URL's digest, the same for two routes to one webhook. */
  | { type: 'webhook'; destination: string };

export interface RoutingRoute {
  id: string;
  /** The agent of the API key that set the route; null when the CLI did. */
  keyAgentId: string | null;
  /** `*`, `group:<name>` or `person:<email>` (lower-cased). */
  audience: string;
  kind: NotificationKind;
  target: RoutingTarget;
}

/** A person Gatehouse knows from their last sign-in: their email (lower-cased) and groups then. */
export interface KnownPerson {
  email: string;
  groups: readonly string[];
}

export interface RoutingInput {
  approvalId: string;
  /** The approval's `requested_from`; empty: any approver. */
  requestedFrom: readonly string[];
  /**
   * The role mappings holding `approver` in the environment, as mapped (`finance`,
   * `person:ada@example.com`): who "any approver" is when `requested_from` is empty.
   */
  approverMappings: readonly string[];
  /** The kinds whose channel the environment has set: routes of the others deliver nothing. */
  channels: readonly NotificationKind[];
  routes: readonly RoutingRoute[];
  /** The people known, at least every member of the groups asked (others are ignored). */
  people: readonly KnownPerson[];
  /** Who opted out of what (emails lower-cased). */
  optOuts: readonly { email: string; kind: NotificationKind }[];
}

/** One message to send: through which channel, to whom, and for which entry it answers. */
export interface NotificationTarget {
  channel: NotificationKind;
  /**
   * The `requested_from` entry this message answers (`group:finance`, `person:ada@example.com`),
   * or `role:approver` when the approval named nobody: a decision link sent with it is made for
   * this addressee.
   */
  addressee: string;
  to: {
    email?: string;
    slackChannel?: string;
    /** A Slack direct message to the person Slack knows by this email. */
    slackDmEmail?: string;
    /** The route whose sealed webhook URL to post to (read it with `teamsWebhookUrl`). */
    teamsWebhookRef?: string;
  };
  /**
   * Stable for this approval, channel and destination, whatever else changes: an idempotency key
   * for the send. Holds a digest of the destination, never an address or a secret.
   */
  key: string;
  /**
   * Whether the destination is read by several people (a fixed address, a Slack channel, a Teams
   * webhook) rather than one person's own (their address, their direct message): a round that
   * must leave some out leaves out the personal ones first.
   */
  shared: boolean;
  /**
   * The agent of the API key that set the route this message follows (null: the CLI set it): a
   * decision link sent along must never decide that agent's own calls, as for webhooks.
   */
  keyAgentId: string | null;
}

/** One entry asked: the routes it matches, who its members are, and what it answers for. */
interface AskedUnit {
  /** The audience routes name it by; null: only `*` routes apply. */
  audience: string | null;
  addressee: string;
  members: readonly string[];
}

const TARGET_ORDER: Record<RoutingTarget['type'], number> = {
  each_person: 0,
  address: 1,
  slack_channel: 2,
  webhook: 3,
};

/** Routes in one order whatever order they were read in: by kind, then target. */
function ordered(routes: readonly RoutingRoute[]): RoutingRoute[] {
  const value = (route: RoutingRoute) =>
    route.target.type === 'address'
      ? route.target.address
      : route.target.type === 'slack_channel'
        ? route.target.channel
        : route.target.type === 'webhook'
          ? route.target.destination
          : '';
  return [...routes].sort(
    (a, b) =>
      NOTIFICATION_KINDS.indexOf(a.kind) - NOTIFICATION_KINDS.indexOf(b.kind) ||
      TARGET_ORDER[a.target.type] - TARGET_ORDER[b.target.type] ||
      value(a).localeCompare(value(b)) ||
      a.id.localeCompare(b.id),
  );
}

function membersOf(group: string, people: readonly KnownPerson[]): string[] {
  return people
    .filter((person) => person.groups.includes(group))
    .map((person) => person.email.toLowerCase());
}

function sortedUnique(emails: Iterable<string>): string[] {
  return [...new Set(emails)].sort();
}

/**
 * The entries asked, each with its members. Named entries in the order `requested_from` names
 * them (a person named twice, or in two cases, once); entries that name a key's agent or a role
 * are programs, told by webhook, not here. When nobody is named, any approver is asked: one unit
 * for the `*` routes, whose members are every known approver, and one per approver mapping for
 * the routes naming that group or person, all answering as `role:approver`.
 */
function askedUnits(input: RoutingInput): AskedUnit[] {
  if (input.requestedFrom.length === 0) {
    const entries = input.approverMappings.map(mappingAsEntry);
    const unitOf = (entry: string): AskedUnit => ({
      audience: entry,
      addressee: ANY_APPROVER_ADDRESSEE,
      members: entry.startsWith(PERSON_PREFIX)
        ? [entry.slice(PERSON_PREFIX.length)]
        : sortedUnique(membersOf(entry.slice(GROUP_PREFIX.length), input.people)),
    });
    const units = entries.map(unitOf);
    return [
      {
        audience: null,
        addressee: ANY_APPROVER_ADDRESSEE,
        members: sortedUnique(units.flatMap((unit) => unit.members)),
      },
      ...units,
    ];
  }
  const seen = new Set<string>();
  const units: AskedUnit[] = [];
  for (const raw of input.requestedFrom) {
    const entry = normalAudience(raw);
    if (seen.has(entry)) continue;
    seen.add(entry);
    if (entry.startsWith(PERSON_PREFIX) && entry.length > PERSON_PREFIX.length) {
      units.push({
        audience: entry,
        addressee: entry,
        members: [entry.slice(PERSON_PREFIX.length)],
      });
    } else if (entry.startsWith(GROUP_PREFIX) && entry.length > GROUP_PREFIX.length) {
      units.push({
        audience: entry,
        addressee: entry,
        members: sortedUnique(membersOf(entry.slice(GROUP_PREFIX.length), input.people)),
      });
    }
  }
  return units;
}

function routeApplies(route: RoutingRoute, unit: AskedUnit): boolean {
  if (unit.audience === null) return route.audience === EVERYONE_ASKED;
  // When nobody is named, `*` routes apply once, to the unit of every approver.
  if (route.audience === EVERYONE_ASKED) return unit.addressee !== ANY_APPROVER_ADDRESSEE;
  return route.audience === unit.audience;
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Who is told of a held call, through what: pure, so the same answer comes from the same
 * approval, routes, people and opt-outs wherever it is computed.
 *
 * - Each entry asked (or every approver, when nobody is named) meets the routes naming it and
 *   every `*` route; routes add up.
 * - `each_person` on e-mail is each person's own address, on Slack a direct message found by
 *   their e-mail. A `person:` entry's person is known by the entry itself; a group's people are
 *   those whose groups at their last sign-in include it: someone who never signed in is unknown
 *   to Gatehouse and is reached only through a group mailbox or channel.
 * - An opt-out stops what is addressed to that person alone (e-mails to their address, Slack
 *   direct messages); a group mailbox, a Slack channel or a Teams webhook reaches others too and
 *   is sent all the same.
 * - One message per channel and destination: the first entry that reaches it (in the order
 *   `requested_from` names them) is its addressee.
 * - Routes of a kind whose channel is not set deliver nothing.
 */
export function routeNotifications(input: RoutingInput): NotificationTarget[] {
  const channels = new Set(input.channels);
  const optedOut = new Set(
    input.optOuts.map((optOut) => `${optOut.kind}:${optOut.email.toLowerCase()}`),
  );
  const routes = ordered(input.routes).filter((route) => channels.has(route.kind));
  const sent = new Set<string>();
  const targets: NotificationTarget[] = [];

  const add = (
    route: RoutingRoute,
    channel: NotificationKind,
    destination: string,
    addressee: string,
    to: NotificationTarget['to'],
  ) => {
    const id = `${channel}:${destination}`;
    const shared = route.target.type !== 'each_person';
    if (sent.has(id)) return;
    sent.add(id);
    targets.push({
      channel,
      addressee,
      to,
      key: `${input.approvalId}:${channel}:${digest(destination).slice(0, 32)}`,
      shared,
      keyAgentId: route.keyAgentId,
    });
  };

  for (const unit of askedUnits(input)) {
    for (const route of routes.filter((candidate) => routeApplies(candidate, unit))) {
      const { target } = route;
      switch (target.type) {
        case 'each_person':
          for (const email of unit.members) {
            if (optedOut.has(`${route.kind}:${email}`)) continue;
            if (route.kind === 'email') add(route, 'email', email, unit.addressee, { email });
            else if (route.kind === 'slack') {
              add(route, 'slack', `dm:${email}`, unit.addressee, { slackDmEmail: email });
            }
          }
          break;
        case 'address': {
          const address = target.address.toLowerCase();
          // A fixed address that is an opted-out person's own is addressed to them alone.
          if (optedOut.has(`email:${address}`)) break;
          add(route, 'email', address, unit.addressee, { email: target.address });
          break;
        }
        case 'slack_channel':
          add(route, 'slack', `channel:${target.channel}`, unit.addressee, {
            slackChannel: target.channel,
          });
          break;
        case 'webhook':
          add(route, 'teams', target.destination, unit.addressee, { teamsWebhookRef: route.id });
          break;
      }
    }
  }
  return targets;
}
