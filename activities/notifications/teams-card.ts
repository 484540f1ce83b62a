import type { ApprovalView } from '../../workflows/call-types.js';
import {
  deciderText,
  oneLine,
  shownRequest,
  SHOWN_REQUEST_CHARACTERS,
  tallyText,
  utcMinute,
} from './shown-request.js';

/**
 * The Teams message of an approval: an Adaptive Card (adaptivecards.io, schema 1.4) posted through
 * a Teams "workflow" incoming webhook, pure.
 *
 * - **No bot, so no Action.Submit or Action.Execute**: a workflow posts the card as its flow bot,
 *   and nothing would receive a submit. The one action is `Action.OpenUrl` to the approval's
 *   review page in the console, where the person signs in and decides.
 * - **Text from the call is never markdown**: Teams reads markdown in TextBlock and in FactSet
 *   titles and values, so a user id like `[click](https://evil)` would become a link there. Every
 *   value from the call is a `TextRun` of a RichTextBlock, which the schema says never takes
 *   markdown; TextBlocks hold Gatehouse's own words only.
 * - **Version 1.4**: everything used exists since 1.2 (RichTextBlock and TextRun) or 1.0, and 1.4
 *   is what Teams clients have rendered for longest; 1.5 would add nothing used here.
 * - **Small**: Teams refuses messages over about 28 KB; the request is cut to 2,000 characters and
 *   each value to 200, which keeps a card far below that.
 */

export const ADAPTIVE_CARD_VERSION = '1.4';

/** The parts of the Adaptive Card schema this card uses. */
export interface TextRun {
  type: 'TextRun';
  text: string;
  weight?: 'Bolder';
  fontType?: 'Monospace';
  isSubtle?: boolean;
}

export type CardElement =
  | {
      type: 'TextBlock';
      text: string;
      wrap: true;
      size?: 'Medium' | 'Large';
      weight?: 'Bolder';
      isSubtle?: boolean;
      spacing?: 'Medium';
    }
  | { type: 'RichTextBlock'; inlines: TextRun[]; spacing?: 'Small' | 'Medium' };

export interface OpenUrlAction {
  type: 'Action.OpenUrl';
  title: string;
  url: string;
}

export interface AdaptiveCard {
  type: 'AdaptiveCard';
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
  version: typeof ADAPTIVE_CARD_VERSION;
  /** What a client too old for the card shows instead. */
  fallbackText: string;
  body: CardElement[];
  actions: OpenUrlAction[];
}

/**
 * The body Teams' workflow webhooks take (the Bot Framework message shape Microsoft documents for
 * them): a `message` whose attachments are cards, each with its content type.
 */
export interface TeamsWebhookMessage {
  type: 'message';
  attachments: {
    contentType: 'application/vnd.microsoft.card.adaptive';
    contentUrl: null;
    content: AdaptiveCard;
  }[];
}

/** A line of the card's own words (markdown-free) before a value from the call. */
const fact = (label: string, value: string): CardElement => ({
  type: 'RichTextBlock',
  spacing: 'Small',
  inlines: [
    { type: 'TextRun', text: `${label}: `, weight: 'Bolder' },
    { type: 'TextRun', text: value },
  ],
});

const heading = (text: string): CardElement => ({
  type: 'TextBlock',
  text,
  wrap: true,
  size: 'Large',
  weight: 'Bolder',
});

/** The facts, the decisions so far and what will run. */
function details(approval: ApprovalView): CardElement[] {
  const shown = shownRequest(approval);
  const body: CardElement[] = [
    fact('Agent', oneLine(approval.agent_id)),
    fact('User', oneLine(approval.user)),
    fact('Action', `${oneLine(approval.action)} (${approval.scope})`),
    fact('Policy', `${oneLine(approval.policy.id)} v${String(approval.policy.version)}`),
    fact('Rule', oneLine(approval.policy.rule)),
    fact(
      approval.status === 'pending' ? 'Expires' : 'Was to expire',
      utcMinute(approval.expires_at),
    ),
    fact('Approvals', tallyText(approval)),
  ];
  if (approval.requested_from.length > 0) {
    body.push(fact('Asked of', oneLine(approval.requested_from.join(', '))));
  }
  for (const d of approval.decisions ?? []) {
    const verb = d.decision === 'approve' ? 'Approved by' : 'Rejected by';
    body.push(fact(verb, `${deciderText(d)}, ${utcMinute(d.at)}`));
  }
  body.push(
    { type: 'TextBlock', text: shown.title, wrap: true, weight: 'Bolder', spacing: 'Medium' },
    {
      type: 'RichTextBlock',
      inlines: [{ type: 'TextRun', text: shown.text, fontType: 'Monospace' }],
    },
  );
  if (shown.cut) {
    body.push({
      type: 'TextBlock',
      wrap: true,
      isSubtle: true,
      text: `Showing the first ${SHOWN_REQUEST_CHARACTERS.toLocaleString('en')} of ${shown.length.toLocaleString('en')} characters: the review page shows all of it.`,
    });
  }
  return body;
}

/**
 * The card asking for a decision: its one action opens the approval's review page in the console,
 * where a person signs in (a channel is read by many: no decision link goes into it).
 */
export function teamsApprovalCard(approval: ApprovalView, reviewUrl: string): AdaptiveCard {
  return {
    type: 'AdaptiveCard',
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    version: ADAPTIVE_CARD_VERSION,
    // Fallback text may be read as markdown: Gatehouse's own words and its URL only.
    fallbackText: `A call is waiting for your approval. Open ${reviewUrl} to review and decide.`,
    body: [heading('Approval needed'), ...details(approval)],
    actions: [{ type: 'Action.OpenUrl', title: 'Review and decide', url: reviewUrl }],
  };
}

/** The message a workflow webhook takes, carrying one card. */
export function teamsWebhookMessage(content: AdaptiveCard): TeamsWebhookMessage {
  return {
    type: 'message',
    attachments: [
      { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content },
    ],
  };
}
