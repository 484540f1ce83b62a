// Who is told of a held call, and through what: routeNotifications, pure, as a table of cases
// (routes, people, opt-outs, requested_from → the messages), then the properties every answer
// keeps (one message per destination, stable keys with nothing personal or secret in them).
import { describe, expect, it } from '@jest/globals';
import type { NotificationKind } from '../../activities/notifications/kinds.js';
import {
  routeNotifications,
  type KnownPerson,
  type NotificationTarget,
  type RoutingInput,
  type RoutingRoute,
} from '../../activities/notifications/routing.js';

const ALL: NotificationKind[] = ['email', 'slack', 'teams'];

let ids = 0;
function route(
  audience: string,
  kind: NotificationKind,
  target: RoutingRoute['target'],
  keyAgentId: string | null = 'admin',
): RoutingRoute {
  ids += 1;
  return { id: `r${String(ids).padStart(3, '0')}`, audience, kind, target, keyAgentId };
}
const eachPerson = { type: 'each_person' } as const;
const address = (value: string) => ({ type: 'address', address: value }) as const;
const slackChannel = (channel: string) => ({ type: 'slack_channel', channel }) as const;
const webhook = (destination: string) => ({ type: 'webhook', destination }) as const;

const PEOPLE: KnownPerson[] = [
  { email: 'alice@example.com', groups: ['approvers'] },
  { email: 'bob@example.com', groups: ['finance'] },
  { email: 'carol@example.com', groups: ['approvers', 'finance'] },
  { email: 'olivia@example.com', groups: ['operators'] },
];

function input(overrides: Partial<RoutingInput>): RoutingInput {
  return {
    approvalId: 'appr-1',
    requestedFrom: [],
    approverMappings: [],
    channels: ALL,
    routes: [],
    people: PEOPLE,
    optOuts: [],
    ...overrides,
  };
}

/** The answer without keys, as `channel addressee → destination` lines, for the table. */
function lines(targets: NotificationTarget[]): string[] {
  return targets.map((target) => {
    const to = target.to;
    const where =
      to.email ??
      (to.slackChannel ? `#${to.slackChannel}` : undefined) ??
      (to.slackDmEmail ? `dm ${to.slackDmEmail}` : undefined) ??
      `webhook ${to.teamsWebhookRef ?? '?'}`;
    return `${target.channel} ${target.addressee} → ${where}`;
  });
}

const financeEmail = route('group:finance', 'email', eachPerson);
const financeMailbox = route('group:finance', 'email', address('Finance@Example.com'));
const financeSlack = route('group:finance', 'slack', slackChannel('C0FINANCE1'));
const financeTeams = route('group:finance', 'teams', webhook('sha256:aaa'));
const approversTeams = route('group:approvers', 'teams', webhook('sha256:aaa'));
const everyoneDm = route('*', 'slack', eachPerson);
const everyoneEmail = route('*', 'email', eachPerson);
const everyoneChannel = route('*', 'slack', slackChannel('C0ALLAPPRV'));
const adaMailbox = route('person:ada@example.com', 'email', address('ada.desk@example.com'));

const CASES: [string, Partial<RoutingInput>, string[]][] = [
  ['no routes: nobody is told', { requestedFrom: ['group:finance'] }, []],
  [
    'a group by e-mail: its known members, each once, by address',
    { requestedFrom: ['group:finance'], routes: [financeEmail] },
    ['email group:finance → bob@example.com', 'email group:finance → carol@example.com'],
  ],
  [
    'a group mailbox as well as its members ("routes add up")',
    { requestedFrom: ['group:finance'], routes: [financeMailbox, financeEmail] },
    [
      'email group:finance → bob@example.com',
      'email group:finance → carol@example.com',
      'email group:finance → Finance@Example.com',
    ],
  ],
  [
    'a group nobody known is in: only its mailbox',
    { requestedFrom: ['group:finance'], people: [], routes: [financeEmail, financeMailbox] },
    ['email group:finance → Finance@Example.com'],
  ],
  [
    'a person named who never signed in is still told at the address the entry names',
    { requestedFrom: ['person:Dora@Example.com'], routes: [everyoneEmail] },
    ['email person:dora@example.com → dora@example.com'],
  ],
  [
    'a person in two groups asked gets one message per channel, answering the first entry',
    { requestedFrom: ['group:approvers', 'group:finance'], routes: [everyoneEmail] },
    [
      'email group:approvers → alice@example.com',
      'email group:approvers → carol@example.com',
      'email group:finance → bob@example.com',
    ],
  ],
  [
    'one Teams webhook routed for two groups posts once',
    { requestedFrom: ['group:finance', 'group:approvers'], routes: [approversTeams, financeTeams] },
    [`teams group:finance → webhook ${financeTeams.id}`],
  ],
  [
    '* reaches every entry asked: a channel once, direct messages per person',
    {
      requestedFrom: ['group:finance', 'person:olivia@example.com'],
      routes: [everyoneChannel, everyoneDm],
    },
    [
      'slack group:finance → dm bob@example.com',
      'slack group:finance → dm carol@example.com',
      'slack group:finance → #C0ALLAPPRV',
      'slack person:olivia@example.com → dm olivia@example.com',
    ],
  ],
  [
    'routes of another audience do not apply',
    { requestedFrom: ['group:approvers'], routes: [financeEmail, financeSlack, adaMailbox] },
    [],
  ],
  [
    'a person route applies to that person named, in any case',
    { requestedFrom: ['person:ADA@example.com'], routes: [adaMailbox] },
    ['email person:ada@example.com → ada.desk@example.com'],
  ],
  [
    'an opt-out stops what is addressed to the person alone, not shared places',
    {
      requestedFrom: ['group:finance'],
      routes: [financeEmail, financeMailbox, financeSlack, everyoneDm],
      optOuts: [
        { email: 'bob@example.com', kind: 'email' },
        { email: 'carol@example.com', kind: 'slack' },
      ],
    },
    [
      'email group:finance → carol@example.com',
      'email group:finance → Finance@Example.com',
      'slack group:finance → dm bob@example.com',
      'slack group:finance → #C0FINANCE1',
    ],
  ],
  [
    'an opt-out of e-mail also stops a fixed address that is the person’s own',
    {
      requestedFrom: ['person:ada@example.com'],
      routes: [route('*', 'email', address('Ada@example.com'))],
      optOuts: [{ email: 'ada@example.com', kind: 'email' }],
    },
    [],
  ],
  [
    'an opt-out of one channel leaves the others',
    {
      requestedFrom: ['person:ada@example.com'],
      routes: [everyoneEmail, everyoneDm],
      optOuts: [{ email: 'ada@example.com', kind: 'slack' }],
    },
    ['email person:ada@example.com → ada@example.com'],
  ],
  [
    'routes of a channel not set deliver nothing',
    {
      requestedFrom: ['group:finance'],
      channels: ['email'],
      routes: [financeEmail, financeSlack, financeTeams],
    },
    ['email group:finance → bob@example.com', 'email group:finance → carol@example.com'],
  ],
  [
    'entries naming keys or roles are programs: no message',
    { requestedFrom: ['admin', 'role:approver'], routes: [everyoneEmail, everyoneChannel] },
    [],
  ],
  [
    'nobody named: * reaches every known approver, as role:approver',
    {
      requestedFrom: [],
      approverMappings: ['approvers', 'person:dora@example.com'],
      routes: [everyoneEmail, everyoneChannel],
    },
    [
      'email role:approver → alice@example.com',
      'email role:approver → carol@example.com',
      'email role:approver → dora@example.com',
      'slack role:approver → #C0ALLAPPRV',
    ],
  ],
  [
    'nobody named: a route of an approver group applies, as role:approver',
    {
      requestedFrom: [],
      approverMappings: ['approvers', 'finance'],
      routes: [financeSlack, financeMailbox],
    },
    ['email role:approver → Finance@Example.com', 'slack role:approver → #C0FINANCE1'],
  ],
  [
    'nobody named: a group that holds no approver role is not asked',
    { requestedFrom: [], approverMappings: ['approvers'], routes: [financeSlack, financeEmail] },
    [],
  ],
  [
    'nobody named and no approver mapped: shared places are still told, nobody in person',
    { requestedFrom: [], approverMappings: [], routes: [everyoneChannel, everyoneDm] },
    ['slack role:approver → #C0ALLAPPRV'],
  ],
  [
    'group names compare exactly, as the identity provider names them',
    { requestedFrom: ['group:Finance'], routes: [financeEmail, route('*', 'email', eachPerson)] },
    [],
  ],
];

describe('routeNotifications', () => {
  it.each(CASES)('%s', (_name, overrides, expected) => {
    expect(lines(routeNotifications(input(overrides)))).toEqual(expected);
  });

  it('gives each message a key stable for its approval, channel and destination, holding no address', () => {
    const asked = input({
      requestedFrom: ['group:finance'],
      routes: [financeEmail, financeSlack, financeTeams, everyoneDm],
    });
    const first = routeNotifications(asked);
    // The same answer whatever order the routes and people were read in.
    const again = routeNotifications({
      ...asked,
      routes: [...asked.routes].reverse(),
      people: [...PEOPLE].reverse(),
    });
    expect(again).toEqual(first);
    const keys = first.map((target) => target.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) {
      expect(key).toMatch(/^appr-1:(email|slack|teams):[0-9a-f]{32}$/);
      expect(key).not.toMatch(/@|C0FINANCE1|sha256/);
    }
    // Another approval: other keys for the same destinations.
    const other = routeNotifications({ ...asked, approvalId: 'appr-2' });
    expect(other.map((target) => target.key.slice('appr-2'.length))).toEqual(
      keys.map((key) => key.slice('appr-1'.length)),
    );
    // A destination's key does not depend on who else is told, or for which entry.
    const bobOnly = routeNotifications(
      input({ requestedFrom: ['person:bob@example.com'], routes: [everyoneDm] }),
    );
    expect(bobOnly[0]?.key).toBe(
      first.find((target) => target.to.slackDmEmail === 'bob@example.com')?.key,
    );
  });

  it('names the key agent that set the route each message follows (null: the CLI)', () => {
    const cliMailbox = route('group:finance', 'email', address('ops@example.com'), null);
    const targets = routeNotifications(
      input({ requestedFrom: ['group:finance'], routes: [financeSlack, cliMailbox] }),
    );
    expect(targets.map((target) => [target.channel, target.keyAgentId])).toEqual([
      ['email', null],
      ['slack', 'admin'],
    ]);
  });

  it('never sends one destination twice, whatever the routes', () => {
    const routes = [
      financeEmail,
      financeMailbox,
      everyoneEmail,
      route('*', 'email', address('finance@example.com')),
      route('person:bob@example.com', 'email', address('bob@example.com')),
      financeSlack,
      route('*', 'slack', slackChannel('C0FINANCE1')),
      everyoneDm,
      financeTeams,
      approversTeams,
    ];
    const targets = routeNotifications(
      input({
        requestedFrom: ['person:bob@example.com', 'group:finance', 'group:approvers'],
        routes,
      }),
    );
    const destinations = targets.map(
      (target) =>
        `${target.channel}:${(target.to.email ?? '').toLowerCase()}${target.to.slackChannel ?? ''}${target.to.slackDmEmail ?? ''}${target.to.teamsWebhookRef ? 'teams' : ''}`,
    );
    expect(new Set(destinations).size).toBe(destinations.length);
    // Bob is named first: his messages answer his own entry.
    expect(
      targets.filter((target) => target.to.email === 'bob@example.com').map((t) => t.addressee),
    ).toEqual(['person:bob@example.com']);
  });
});
