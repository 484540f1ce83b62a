// What reaches one person, as the console's Notifications page shows it: personReach, pure, over
// the same routing the senders follow.
import { describe, expect, it } from '@jest/globals';
import type { NotificationKind } from '../../activities/notifications/kinds.js';
import { personReach } from '../../activities/notifications/person-reach.js';
import type { RoutingRoute } from '../../activities/notifications/routing.js';

const route = (
  id: string,
  audience: string,
  kind: NotificationKind,
  target: RoutingRoute['target'],
): RoutingRoute => ({ id, audience, kind, target, keyAgentId: null });

const ROUTES: RoutingRoute[] = [
  route('r1', 'group:finance', 'email', { type: 'each_person' }),
  route('r2', 'group:finance', 'email', { type: 'address', address: 'finance@example.com' }),
  route('r3', '*', 'slack', { type: 'each_person' }),
  route('r4', 'group:ops', 'slack', { type: 'slack_channel', channel: 'C0OPSROOM1' }),
  route('r5', 'person:bob@example.com', 'teams', { type: 'webhook', destination: 'sha256:b' }),
];

/** Per kind: what is addressed to the person, and the shared places, each with its askers. */
function summary(reach: ReturnType<typeof personReach>) {
  const line = (entry: {
    target: { to: Record<string, string | undefined> };
    addressees: string[];
  }) => `${Object.values(entry.target.to).join('')} ← ${entry.addressees.join(', ')}`;
  return Object.fromEntries(
    reach.map((kind) => [
      kind.kind,
      { set: kind.channelSet, personal: kind.personal.map(line), shared: kind.shared.map(line) },
    ]),
  );
}

describe('personReach', () => {
  it('names every approval that reaches a person at each destination, personal apart from shared', () => {
    expect(
      summary(
        personReach({
          email: 'Bob@Example.com',
          groups: ['finance'],
          approverMappings: ['finance', 'ops'],
          channels: ['email', 'slack', 'teams'],
          routes: ROUTES,
        }),
      ),
    ).toEqual({
      email: {
        set: true,
        personal: ['bob@example.com ← group:finance, role:approver'],
        shared: ['finance@example.com ← group:finance, role:approver'],
      },
      slack: {
        set: true,
        // Not in ops: its channel is not Bob's, even when any approver is asked.
        personal: ['bob@example.com ← person:bob@example.com, group:finance, role:approver'],
        shared: [],
      },
      teams: { set: true, personal: [], shared: ['r5 ← person:bob@example.com'] },
    });
  });

  it('asks nobody-named approvals only of an approver, and says which channels are not set', () => {
    const reach = summary(
      personReach({
        email: 'dora@example.com',
        groups: ['ops'],
        approverMappings: ['finance'],
        channels: ['slack'],
        routes: ROUTES,
      }),
    );
    expect(reach).toEqual({
      email: { set: false, personal: [], shared: [] },
      slack: {
        set: true,
        personal: ['dora@example.com ← person:dora@example.com, group:ops'],
        shared: ['C0OPSROOM1 ← group:ops'],
      },
      teams: { set: false, personal: [], shared: [] },
    });
  });
});
