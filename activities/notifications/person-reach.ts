import { ANY_APPROVER_ADDRESSEE, GROUP_PREFIX, PERSON_PREFIX } from './audience.js';
import { NOTIFICATION_KINDS, type NotificationKind } from './kinds.js';
import { routeNotifications, type NotificationTarget, type RoutingRoute } from './routing.js';

/** One destination that reaches a person, and every kind of approval that sends it there. */
export interface ReachingTarget {
  target: NotificationTarget;
  /** The entries asked that send it: `person:<email>`, `group:<name>`, `role:approver`. */
  addressees: string[];
}

/** How one kind of channel reaches a person, as the console's Notifications page shows it. */
export interface KindReach {
  kind: NotificationKind;
  /** Whether the environment has set this channel up: routes of one not set deliver nothing. */
  channelSet: boolean;
  /** Messages addressed to this person alone (their address, a direct message): an opt-out stops them. */
  personal: ReachingTarget[];
  /** Shared places the person is told in (a group mailbox, a channel): an opt-out leaves them. */
  shared: ReachingTarget[];
}

export interface PersonReachInput {
  email: string;
  /** Their groups at this sign-in. */
  groups: readonly string[];
  /** The role mappings holding `approver` in the environment (`finance`, `person:<email>`). */
  approverMappings: readonly string[];
  channels: readonly NotificationKind[];
  routes: readonly RoutingRoute[];
}

/**
 * What would reach this person, per kind of channel, whatever their opt-outs: the routing of an
 * approval asking them by email, of one asking each of their groups, and, when they or one of
 * their groups hold `approver`, of one asking nobody, the person being the only one known. The
 * same routing the senders follow, so the page cannot promise what is not sent.
 */
export function personReach(input: PersonReachInput): KindReach[] {
  const email = input.email.toLowerCase();
  const common = {
    approvalId: 'reach',
    channels: input.channels,
    routes: input.routes,
    people: [{ email, groups: input.groups }],
    optOuts: [],
  };
  const ownApproverMappings = input.approverMappings.filter(
    (mapping) =>
      mapping.toLowerCase() === `${PERSON_PREFIX}${email}` || input.groups.includes(mapping),
  );
  const askings: { requestedFrom: string[]; approverMappings: readonly string[] }[] = [
    { requestedFrom: [`${PERSON_PREFIX}${email}`], approverMappings: [] },
    ...input.groups.map((group) => ({
      requestedFrom: [`${GROUP_PREFIX}${group}`],
      approverMappings: [],
    })),
    ...(ownApproverMappings.length > 0
      ? [{ requestedFrom: [], approverMappings: ownApproverMappings }]
      : []),
  ];
  // One destination once, with every approval that sends it there.
  const byKey = new Map<string, ReachingTarget>();
  for (const asking of askings) {
    for (const target of routeNotifications({ ...common, ...asking })) {
      const known = byKey.get(target.key);
      if (!known) byKey.set(target.key, { target, addressees: [target.addressee] });
      else if (!known.addressees.includes(target.addressee))
        known.addressees.push(target.addressee);
    }
  }
  const reaching = [...byKey.values()];
  const isPersonal = ({ target }: ReachingTarget) =>
    target.to.email?.toLowerCase() === email || target.to.slackDmEmail === email;
  return NOTIFICATION_KINDS.map((kind) => {
    const ofKind = reaching.filter(({ target }) => target.channel === kind);
    return {
      kind,
      channelSet: input.channels.includes(kind),
      personal: ofKind.filter(isPersonal),
      shared: ofKind.filter((reach) => !isPersonal(reach)),
    };
  });
}

/** An addressee in words: "you", "group finance", "any approver". */
export function addresseeInWords(addressee: string): string {
  if (addressee === ANY_APPROVER_ADDRESSEE) return 'any approver';
  if (addressee.startsWith(GROUP_PREFIX)) {
    return `group ${addressee.slice(GROUP_PREFIX.length)}`;
  }
  if (addressee.startsWith(PERSON_PREFIX)) return 'you by name';
  return addressee;
}
