import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  adaptiveCardProblems,
  startTeamsStandin,
  TEAMS_MESSAGE_MAX_BYTES,
  type TeamsStandin,
} from '../../infra/teams-standin/index.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The Teams workflow webhook stand-in: what it accepts, how it reads cards (Microsoft's Adaptive
 * Cards library, in Node without a DOM), and its faults.
 */

let teams: TeamsStandin;
const started = stopsAfterAll();

beforeAll(async () => {
  teams = started.add(await startTeamsStandin());
});

type Json = Record<string, unknown>;

const card = (overrides: Json = {}): Json => ({
  type: 'AdaptiveCard',
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
  version: '1.4',
  body: [
    { type: 'TextBlock', text: 'Approval needed', wrap: true, size: 'Large', weight: 'Bolder' },
    {
      type: 'RichTextBlock',
      inlines: [
        { type: 'TextRun', text: 'User: ', weight: 'Bolder' },
        { type: 'TextRun', text: 'u_123' },
      ],
    },
  ],
  actions: [{ type: 'Action.OpenUrl', title: 'Review', url: 'https://gatehouse.example/r/1' }],
  ...overrides,
});

const message = (content: Json): Json => ({
  type: 'message',
  attachments: [
    { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content },
  ],
});

async function post(body: unknown, url = teams.url): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Posts and answers the delivery the stand-in recorded for it. */
async function deliver(body: unknown) {
  const count = teams.deliveries().length + 1;
  const answer = await post(body);
  const delivery = (await teams.received(count))[count - 1];
  if (!delivery) throw new Error('no delivery recorded');
  return { answer, delivery };
}

describe('a workflow webhook', () => {
  it('accepts a message with an Adaptive Card with 202, and records the card with no problems', async () => {
    const { answer, delivery } = await deliver(message(card()));
    expect(answer.status).toBe(202);
    expect(await answer.text()).toBe('');
    expect(delivery).toMatchObject({ status: 202, problems: [], fault: null });
    expect(delivery.cards).toEqual([{ card: card(), problems: [] }]);
  });

  it('runs only with its sig: another or none is 401, and nothing is delivered', async () => {
    const before = teams.deliveries().length;
    const wrong = new URL(teams.url);
    wrong.searchParams.set('sig', 'guessed');
    expect((await post(message(card()), wrong.toString())).status).toBe(401);
    wrong.searchParams.delete('sig');
    expect((await post(message(card()), wrong.toString())).status).toBe(401);
    expect((await fetch(teams.url)).status).toBe(405);
    expect(teams.deliveries()).toHaveLength(before);
  });
});

describe('cards Teams could not show are accepted (202) and their problems recorded', () => {
  const cases: [string, unknown, string[]][] = [
    [
      'an element type that does not exist',
      message(card({ body: [{ type: 'Bogus' }] })),
      ['UnknownElementType: Unknown element type "Bogus". Fallback will be used if present.'],
    ],
    [
      'an element newer than the version the card declares',
      message(card({ version: '1.2', body: [{ type: 'Table', columns: [], rows: [] }] })),
      ['UnknownElementType: Unknown element type "Table". Fallback will be used if present.'],
    ],
    [
      'a property newer than the version the card declares',
      message(card({ version: '1.2', body: [{ type: 'TextBlock', text: 'x', style: 'heading' }] })),
      [
        'UnsupportedProperty: Property "style" is supported in version 1.5, but you are using version 1.2.',
      ],
    ],
    [
      'Action.Execute in a card older than 1.4',
      message(card({ version: '1.2', actions: [{ type: 'Action.Execute', title: 'Go' }] })),
      [
        'UnknownActionType: Unknown action type "Action.Execute". Fallback will be used if present.',
      ],
    ],
    [
      'an Action.OpenUrl without its url',
      message(card({ actions: [{ type: 'Action.OpenUrl', title: 'Review' }] })),
      ['PropertyCantBeNull: Property "url" must be set.'],
    ],
    [
      'a value the property does not take',
      message(card({ body: [{ type: 'TextBlock', text: 'x', size: 'gigantic' }] })),
      ['InvalidPropertyValue: Invalid value "gigantic" for property "size".'],
    ],
    [
      'no version',
      message(card({ version: undefined })),
      ['version: a top-level card must declare its version'],
    ],
    [
      'a version newer than Teams renders',
      message(card({ version: '1.6' })),
      ['version: 1.6 is newer than Teams renders (1.5)'],
    ],
    [
      'content that is not an AdaptiveCard',
      message(card({ type: 'HeroCard' })),
      [
        `MissingCardType: Invalid or missing card type. Make sure the card's type property is set to "AdaptiveCard".`,
      ],
    ],
  ];

  it.each(cases)('%s', async (_what, body, problems) => {
    const { answer, delivery } = await deliver(body);
    expect(answer.status).toBe(202);
    expect(delivery.problems).toEqual([]);
    expect(delivery.cards.flatMap((c) => c.problems)).toEqual(problems);
  });

  it('a message of another shape, or no card at all, is a problem of the message', async () => {
    const { delivery: legacy } = await deliver({
      text: 'a connector card, not a workflow message',
    });
    expect(legacy.problems).toEqual([
      'type: Invalid input: expected "message"',
      'attachments: Invalid input: expected array, received undefined',
    ]);
    const { delivery: none } = await deliver({ type: 'message', attachments: [] });
    expect(none.problems).toEqual(['attachments: Too small: expected array to have >=1 items']);
    const wrongType = message(card());
    (wrongType.attachments as Json[])[0] = {
      contentType: 'application/vnd.microsoft.card.hero',
      content: card(),
    };
    const { delivery: hero } = await deliver(wrongType);
    expect(hero.problems).toEqual([
      'attachments.0.contentType: Invalid input: expected "application/vnd.microsoft.card.adaptive"',
    ]);
  });

  it('a body that is not JSON, and a message over 28 KB', async () => {
    const { answer, delivery } = await deliver('{"type": "message"');
    expect(answer.status).toBe(202);
    expect(delivery).toMatchObject({ body: null, problems: ['the body is not JSON'] });

    const big = card({
      body: [{ type: 'TextBlock', text: 'x'.repeat(TEAMS_MESSAGE_MAX_BYTES), wrap: true }],
    });
    const { delivery: tooBig } = await deliver(message(big));
    expect(tooBig.problems).toEqual([
      `the message is ${String(tooBig.bytes)} bytes, over ${String(TEAMS_MESSAGE_MAX_BYTES)}`,
    ]);
    expect(tooBig.cards[0]?.problems).toEqual([]);
  });
});

describe('the Adaptive Cards library in Node', () => {
  it('parses and validates without a DOM: jest’s environment here has none', () => {
    expect(typeof (globalThis as { document?: unknown }).document).toBe('undefined');
    expect(adaptiveCardProblems(card())).toEqual([]);
    expect(adaptiveCardProblems(card({ body: [{ type: 'Bogus' }] }))).toHaveLength(1);
  });
});

describe('faults', () => {
  it('a 429 with Retry-After, then the next delivery is accepted', async () => {
    teams.inject({ kind: 'rate_limited', retryAfterSeconds: 7 });
    const limited = await post(message(card()));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await post(message(card()))).status).toBe(202);
    const [first, second] = teams.deliveries().slice(-2);
    expect([first?.fault, second?.fault]).toEqual(['rate_limited', null]);
  });

  it('a 5xx for as many deliveries as asked', async () => {
    teams.inject({ kind: 'server_error', status: 503, times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await post(message(card()))).status);
    expect(statuses).toEqual([503, 503, 202]);
  });

  it('a held delivery is answered only when released', async () => {
    const held = teams.inject({ kind: 'hold' });
    const count = teams.deliveries().length + 1;
    const answer = post(message(card()));
    await held.met;
    expect(teams.deliveries()).toHaveLength(count - 1);
    held.release();
    expect((await answer).status).toBe(202);
    expect((await teams.received(count))[count - 1]?.fault).toBe('hold');
  });
});
