import { createRequire } from 'node:module';
import type * as AdaptiveCardsModule from 'adaptivecards';
import { z } from 'zod';

/**
 * What a Teams client would make of a workflow webhook's message: the envelope Microsoft
 * documents for posting cards through a Teams workflow (a Bot Framework `message` whose
 * attachments are Adaptive Cards), and each card parsed and validated by Microsoft's own Adaptive
 * Cards library (`adaptivecards`), the one that renders cards in web clients.
 *
 * The library in Node: its `lib/` folder is ES modules written for bundlers (imports without file
 * extensions), which Node refuses, so its UMD bundle (`dist/adaptivecards.js`) is loaded with
 * `require`. Parsing and validating need no DOM (only rendering does), so no DOM shim is loaded;
 * test/teams/teams-standin.test.ts shows both work under jest's Node environment.
 */

const require = createRequire(import.meta.url);
const AdaptiveCards = require('adaptivecards/dist/adaptivecards.js') as typeof AdaptiveCardsModule;

/** The newest card version Teams clients render (Microsoft's Teams card reference: up to 1.5). */
export const TEAMS_MAX_CARD_VERSION = '1.5';

/**
 * Microsoft's Teams webhook documentation: a message over 28 KB is refused. Counted here as the
 * UTF-8 bytes of the JSON body.
 */
export const TEAMS_MESSAGE_MAX_BYTES = 28 * 1024;

export const ADAPTIVE_CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

const envelopeSchema = z.object({
  type: z.literal('message'),
  attachments: z
    .array(
      z.object({
        contentType: z.literal(ADAPTIVE_CARD_CONTENT_TYPE),
        contentUrl: z.string().nullable().optional(),
        content: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1),
});

export interface CheckedCard {
  card: Record<string, unknown>;
  /** Each as `<event>: <message>`; empty when Teams would render the card as written. */
  problems: string[];
}

export interface CheckedMessage {
  /** Problems of the message itself (its shape, its size). */
  problems: string[];
  cards: CheckedCard[];
}

/**
 * Reads a workflow webhook's body as Teams would. Every problem is collected rather than the
 * first thrown, so a test can say what exactly is wrong with a card.
 */
export function checkTeamsMessage(body: unknown, bytes: number): CheckedMessage {
  const problems: string[] = [];
  if (bytes > TEAMS_MESSAGE_MAX_BYTES) {
    problems.push(`the message is ${String(bytes)} bytes, over ${String(TEAMS_MESSAGE_MAX_BYTES)}`);
  }
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) {
    for (const issue of envelope.error.issues) {
      problems.push(`${issue.path.join('.') || 'body'}: ${issue.message}`);
    }
    return { problems, cards: [] };
  }
  return {
    problems,
    cards: envelope.data.attachments.map((attachment) => ({
      card: attachment.content,
      problems: adaptiveCardProblems(attachment.content),
    })),
  };
}

/**
 * A card's problems, by Microsoft's library: parsed against the version the card declares (so an
 * element or property newer than that version is reported, as a client of that version would
 * meet it), then validated. The library's hints are left out; its warnings are not, since Teams
 * would drop or fall back on what they name. Two checks the library leaves to the host are added:
 * the top-level card must declare its version (the schema says so), and Teams renders up to 1.5.
 */
export function adaptiveCardProblems(card: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const declared = typeof card.version === 'string' ? card.version : undefined;
  const probe = new AdaptiveCards.SerializationContext();
  const version = declared === undefined ? undefined : AdaptiveCards.Version.parse(declared, probe);
  if (declared === undefined) problems.push('version: a top-level card must declare its version');
  else if (!version?.isValid)
    problems.push(`version: ${JSON.stringify(declared)} is not a version`);
  else if (
    version.compareTo(AdaptiveCards.Version.parse(TEAMS_MAX_CARD_VERSION, probe) ?? version) > 0
  ) {
    problems.push(`version: ${declared} is newer than Teams renders (${TEAMS_MAX_CARD_VERSION})`);
  }

  const context = new AdaptiveCards.SerializationContext(version?.isValid ? version : undefined);
  const parsed = new AdaptiveCards.AdaptiveCard();
  parsed.parse(card, context);
  const events = Array.from({ length: context.eventCount }, (_, i) => context.getEventAt(i));
  events.push(...parsed.validateProperties().validationEvents);
  for (const event of events) {
    if (event.event === AdaptiveCards.ValidationEvent.Hint) continue;
    problems.push(`${AdaptiveCards.ValidationEvent[event.event]}: ${event.message}`);
  }
  return problems;
}
