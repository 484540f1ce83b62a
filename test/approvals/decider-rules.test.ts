/**
 * Who may decide a held call, as a table: the rules the API answers with and the workflow's
 * `decide` validator enforces (workflows/decider-rules.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { narrowestGrant } from '../../activities/calls/decision-records.js';
import type { GrantRequest } from '../../workflows/grant-types.js';
import {
  decidersInWords,
  deciderIdentity,
  deciderLabel,
  deciderRefusal,
  quorumProblem,
  type Decider,
  type HeldCallParties,
} from '../../workflows/decider-rules.js';

function person(
  email: string,
  groups: string[] = [],
  via: 'console' | 'link' = 'console',
): Decider {
  return {
    kind: 'person',
    issuer: 'https://idp.example.com',
    subject: `sub-${email}`,
    name: email.split('@')[0] ?? email,
    email,
    groups,
    via,
  };
}
const key = (agentId: string): Decider => ({ kind: 'key', agentId });
const link = (addressee: string): Decider => ({ kind: 'link', addressee });

const held = (parties: Partial<HeldCallParties> = {}): HeldCallParties => ({
  agentId: 'billing-bot',
  requestedFrom: [],
  ...parties,
});

describe('deciderIdentity and deciderLabel', () => {
  it.each<[string, Decider, string, string]>([
    ['a key', key('admin'), 'admin', 'admin'],
    [
      'a person, by email without regard to case',
      person('Alice@Example.com'),
      'person:alice@example.com',
      'person:Alice@Example.com',
    ],
    [
      'a link made for a person',
      link('person:Bob@Example.com'),
      'person:bob@example.com',
      'person:Bob@Example.com (decision link)',
    ],
    [
      'a link made for a group',
      link('group:finance'),
      'group:finance',
      'group:finance (decision link)',
    ],
    ['a link made for a key', link('admin'), 'admin', 'admin (decision link)'],
    ['the generic link', link('role:approver'), 'role:approver', 'role:approver (decision link)'],
    ['a generic link stored before', link('approval-link'), 'approval-link', 'approval-link'],
  ])('%s', (_what, decider, identity, label) => {
    expect(deciderIdentity(decider)).toBe(identity);
    expect(deciderLabel(decider)).toBe(label);
  });
});

describe('deciderRefusal', () => {
  const allowed: [string, HeldCallParties, Decider | string][] = [
    ['any key when nobody is named', held(), key('admin')],
    ['a plain string is a key’s agent id', held({ requestedFrom: ['admin'] }), 'admin'],
    ['a key named by a bare name', held({ requestedFrom: ['admin', 'ops'] }), key('ops')],
    [
      'a person named, whatever the case',
      held({ requestedFrom: ['person:alice@example.com'] }),
      person('ALICE@example.com'),
    ],
    [
      'a person named in another case',
      held({ requestedFrom: ['person:Alice@Example.COM'] }),
      person('alice@example.com'),
    ],
    [
      'a person in a group named',
      held({ requestedFrom: ['group:finance'] }),
      person('carol@example.com', ['staff', 'finance']),
    ],
    ['any person when nobody is named', held(), person('dave@example.com')],
    [
      'the link made for a group',
      held({ requestedFrom: ['group:finance'] }),
      link('group:finance'),
    ],
    [
      'the link made for a person',
      held({ requestedFrom: ['person:bob@example.com'] }),
      link('person:BOB@example.com'),
    ],
    ['the generic link when nobody is named', held(), link('role:approver')],
    ['a generic link stored before, when nobody is named', held(), link('approval-link')],
    [
      'a second, different decider',
      held({ requestedFrom: ['group:finance'], decided: ['person:alice@example.com'] }),
      person('bob@example.com', ['finance']),
    ],
    [
      'a person who owns a key of another agent',
      held({ agentKeyOwners: ['mallory@example.com'], agentId: 'billing-bot' }),
      person('alice@example.com'),
    ],
  ];
  it.each(allowed)('allows %s', (_what, parties, decider) => {
    expect(deciderRefusal(parties, decider)).toBeNull();
  });

  const refused: [string, HeldCallParties, Decider | string, RegExp][] = [
    [
      'the held agent’s own key',
      held({ requestedFrom: ['billing-bot'] }),
      key('billing-bot'),
      /"billing-bot" made the held call.*never decide its own approval/,
    ],
    [
      'the held agent’s key when nobody is named',
      held(),
      'billing-bot',
      /never decide its own approval/,
    ],
    [
      'a link made for the held agent',
      held({ requestedFrom: ['billing-bot'] }),
      link('billing-bot'),
      /never decide its own approval/,
    ],
    [
      'a key not named',
      held({ requestedFrom: ['admin'] }),
      key('ops'),
      /requested from "admin"; "ops" is not among them/,
    ],
    [
      'a key whose agent id spells a person named',
      held({ requestedFrom: ['person:alice@example.com'] }),
      key('person:alice@example.com'),
      /is not among them/,
    ],
    [
      'a key whose agent id spells a group named',
      held({ requestedFrom: ['group:finance'] }),
      key('group:finance'),
      /is not among them/,
    ],
    [
      'a person not named',
      held({ requestedFrom: ['person:alice@example.com'] }),
      person('bob@example.com'),
      /"person:bob@example.com" \(groups: none\) is not among them/,
    ],
    [
      'a person outside the group named',
      held({ requestedFrom: ['group:finance'] }),
      person('bob@example.com', ['sales', 'finance-readers']),
      /\(groups: sales, finance-readers\) is not among them/,
    ],
    [
      'a person whose email is only a bare name named',
      held({ requestedFrom: ['alice@example.com'] }),
      person('alice@example.com'),
      /is not among them/,
    ],
    [
      'a link made for someone not named',
      held({ requestedFrom: ['person:alice@example.com'] }),
      link('person:bob@example.com'),
      /is not among them/,
    ],
    [
      'the generic link when someone is named',
      held({ requestedFrom: ['admin'] }),
      link('role:approver'),
      /is not among them/,
    ],
    [
      'the same person twice',
      held({ requestedFrom: ['group:finance'], decided: ['person:alice@example.com'] }),
      person('Alice@example.com', ['finance']),
      /"person:Alice@example.com" has already decided this approval.*cannot decide it twice/,
    ],
    [
      'the same person twice, the second time through a link made for them',
      held({ requestedFrom: ['person:alice@example.com'], decided: ['person:alice@example.com'] }),
      link('person:alice@example.com'),
      /already decided/,
    ],
    [
      'the same key twice',
      held({ decided: ['admin'] }),
      key('admin'),
      /"admin" has already decided/,
    ],
    [
      'a group’s link twice: whoever holds it is one decider',
      held({ requestedFrom: ['group:finance'], decided: ['group:finance'] }),
      link('group:finance'),
      /already decided/,
    ],
    [
      'a person who owns a key of the held agent',
      held({ requestedFrom: ['group:finance'], agentKeyOwners: ['Mallory@Example.com'] }),
      person('mallory@example.com', ['finance']),
      /"person:mallory@example.com" owns an API key of agent "billing-bot".*never decide its calls/,
    ],
    [
      'a link made for a person who owns a key of the held agent',
      held({ agentKeyOwners: ['mallory@example.com'] }),
      link('person:mallory@example.com'),
      /owns an API key of agent "billing-bot"/,
    ],
  ];
  it.each(refused)('refuses %s', (_what, parties, decider, reason) => {
    expect(deciderRefusal(parties, decider)).toMatch(reason);
  });
});

describe('quorumProblem', () => {
  it.each<[string[], number]>([
    [[], 10],
    [['admin'], 1],
    [['admin', 'ops'], 2],
    [['person:a@x.com', 'person:b@x.com', 'admin'], 3],
    [['group:finance'], 5],
    [['person:a@x.com', 'group:finance'], 4],
  ])('accepts %j with quorum %i', (requestedFrom, quorum) => {
    expect(quorumProblem(requestedFrom, quorum)).toBeNull();
  });

  it.each<[string[], number, RegExp]>([
    [['person:a@x.com'], 2, /quorum 2 needs 2 different deciders, but requested_from names only 1/],
    [['admin', 'ops'], 3, /names only 2 \("admin", "ops"\)/],
    // One person spelled twice is one decider.
    [['person:a@x.com', 'person:A@X.com'], 2, /names only 1 \("person:a@x.com"\)/],
  ])('refuses %j with quorum %i', (requestedFrom, quorum, problem) => {
    expect(quorumProblem(requestedFrom, quorum)).toMatch(problem);
  });
});

describe('narrowestGrant: what an approval that needed several approvals grants', () => {
  const user = (seconds: number): GrantRequest => ({ for: 'user', seconds });
  const anyUser = (seconds: number): GrantRequest => ({ for: 'any_user', seconds });
  it.each<[string, (GrantRequest | null)[], GrantRequest | null]>([
    ['one approver', [anyUser(600)], anyUser(600)],
    ['the fewest seconds', [anyUser(600), anyUser(300)], anyUser(300)],
    ['for the user alone if anyone asked that', [anyUser(60), user(3600)], user(60)],
    ['nothing when one approver asked for none', [user(600), null], null],
    ['nothing when nobody approved', [], null],
  ])('%s', (_what, asked, made) => {
    expect(narrowestGrant(asked)).toEqual(made);
  });
});

describe('decidersInWords', () => {
  it.each<[string[], string]>([
    [['a'], 'a'],
    [['a', 'b'], 'a and b'],
    [['a', 'b', 'c'], 'a, b and c'],
  ])('%j', (labels, words) => {
    expect(decidersInWords(labels)).toBe(words);
  });
});
