import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  teamsApprovalCard,
  teamsWebhookMessage,
  type AdaptiveCard,
} from '../../activities/notifications/teams-card.js';
import {
  adaptiveCardProblems,
  startTeamsStandin,
  TEAMS_MESSAGE_MAX_BYTES,
  type TeamsStandin,
} from '../../infra/teams-standin/index.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  aliceApproves,
  HOSTILE,
  hostileApproval,
  pendingApproval,
  REVIEW_URL,
} from './chat-approval-fixtures.js';

type Json = Record<string, unknown>;

/** Every object of the card, depth first. */
function objects(value: unknown): Json[] {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (typeof value !== 'object' || value === null) return [];
  return [value as Json, ...Object.values(value as Json).flatMap(objects)];
}

/** The label and value of each fact line, as the card shows them. */
function facts(card: AdaptiveCard): [string, string][] {
  return card.body.flatMap((element) =>
    element.type === 'RichTextBlock' && element.inlines.length === 2
      ? [[element.inlines[0]?.text ?? '', element.inlines[1]?.text ?? '']]
      : [],
  );
}

/** The monospace run that shows the request. */
function requestShown(card: AdaptiveCard): string {
  const runs = objects(card).filter((o) => o.type === 'TextRun' && o.fontType === 'Monospace');
  expect(runs).toHaveLength(1);
  return runs[0]?.text as string;
}

describe('the approval card', () => {
  const card = teamsApprovalCard(
    pendingApproval({ decisions: [aliceApproves], approvals_needed: 1 }),
    REVIEW_URL,
  );

  it('is an Adaptive Card 1.4 with the facts, the decisions so far and what will run', () => {
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(card.body[0]).toEqual({
      type: 'TextBlock',
      text: 'Approval needed',
      wrap: true,
      size: 'Large',
      weight: 'Bolder',
    });
    expect(facts(card)).toEqual([
      ['Agent: ', 'demo-agent'],
      ['User: ', 'u_123'],
      ['Action: ', 'acme.delete_task (destructive)'],
      ['Policy: ', 'default v2'],
      ['Rule: ', 'rule (app acme, scope destructive)'],
      ['Expires: ', '2026-03-03 09:30 UTC'],
      ['Approvals: ', '1 of 2 approvals, 1 more needed'],
      ['Asked of: ', 'group:approvers, group:finance'],
      ['Approved by: ', 'Alice Approver (person:alice@example.com), 2026-03-02 09:40 UTC'],
    ]);
    expect(requestShown(card)).toBe(JSON.stringify({ id: 't_42', reason: 'duplicate' }, null, 2));
  });

  it('has one action, Action.OpenUrl to the signed review page: no bot, so no submit', () => {
    expect(card.actions).toEqual([
      { type: 'Action.OpenUrl', title: 'Review and decide', url: REVIEW_URL },
    ]);
    const types = objects(card).map((o) => o.type);
    expect(types.filter((t) => typeof t === 'string' && t.startsWith('Action.'))).toEqual([
      'Action.OpenUrl',
    ]);
  });

  it('is valid by Microsoft’s Adaptive Cards library, at the version it declares', () => {
    expect(adaptiveCardProblems(card as unknown as Json)).toEqual([]);
  });
});

describe('text from the call is never markdown in Teams', () => {
  const hostile = hostileApproval();
  const card = teamsApprovalCard(hostile, REVIEW_URL);

  it('is valid, and small enough for Teams, however long and odd the values', () => {
    expect(adaptiveCardProblems(card as unknown as Json)).toEqual([]);
    const bytes = Buffer.byteLength(JSON.stringify(teamsWebhookMessage(card)));
    expect(bytes).toBeLessThan(TEAMS_MESSAGE_MAX_BYTES);
  });

  it('puts values from the call only in TextRuns, which take no markdown; TextBlocks and the fallback are Gatehouse’s own words', () => {
    const withCall = pendingApproval({ user: HOSTILE, agent_id: HOSTILE });
    const plain = teamsApprovalCard(withCall, REVIEW_URL);
    const textBlocks = plain.body.flatMap((e) => (e.type === 'TextBlock' ? [e.text] : []));
    expect(textBlocks).toEqual(['Approval needed', 'Input that will run']);
    expect(plain.fallbackText).toBe(
      `A call is waiting for your approval. Open ${REVIEW_URL} to review and decide.`,
    );
    expect(facts(plain)).toContainEqual([
      'User: ',
      '<!channel> & <https://evil.example|click here> *bold* [link](https://evil.example) \\u202eevil\\u000aSecond line\\u0000\\u2028',
    ]);
  });

  it('shows at most 2,000 characters of the request, and says so', () => {
    const shown = requestShown(card);
    expect(Array.from(shown)).toHaveLength(2000);
    expect(shown.endsWith('…')).toBe(true);
    const note = card.body.find(
      (e) => e.type === 'TextBlock' && e.text.startsWith('Showing the first 2,000 of '),
    );
    expect(note).toMatchObject({ isSubtle: true });
  });
});

describe('posted to a Teams workflow webhook (the stand-in)', () => {
  let teams: TeamsStandin;
  const started = stopsAfterAll();

  beforeAll(async () => {
    teams = started.add(await startTeamsStandin());
  });

  it('is accepted with 202, and Teams would show it as written', async () => {
    const body = teamsWebhookMessage(teamsApprovalCard(hostileApproval(), REVIEW_URL));
    const answer = await fetch(teams.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(202);
    const [delivery] = await teams.received(1);
    expect(delivery?.problems).toEqual([]);
    expect(delivery?.cards.map((c) => c.problems)).toEqual([[]]);
    expect(delivery?.body).toEqual(body);
  });
});
