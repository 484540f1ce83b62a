import type {
  ActionsBlock,
  Button,
  ContextBlock,
  HeaderBlock,
  KnownBlock,
  MrkdwnElement,
  RichTextBlock,
  SectionBlock,
} from '@slack/web-api';
import type { ApprovalView } from '../../workflows/call-types.js';
import {
  cutText,
  deciderText,
  oneLine,
  settledWord,
  shownRequest,
  SHOWN_REQUEST_CHARACTERS,
  tallyText,
  utcMinute,
} from './shown-request.js';

/**
 * The Slack message of an approval (Block Kit, docs.slack.dev/reference/block-kit), pure: a
 * header, the facts an approver needs, what will run, and Approve, Reject and Review buttons; and
 * the message it becomes once decided (through chat.update).
 *
 * - **Buttons carry the approval's id only**: a button's `value` comes back in the interaction
 *   payload, which Slack signs but which anyone in the conversation may trigger; what decides is
 *   the person who pressed and Gatehouse's own checks, never a secret in the message.
 * - **Text from the call is never markup**: values in `mrkdwn` fields have `&`, `<` and `>`
 *   escaped as Slack's formatting guide requires (so `<!channel>` or a masked link in a user id
 *   stays text), and the request is a `rich_text` preformatted run, which Slack shows as typed
 *   and never formats (its guide prefers rich text for text it did not write).
 * - **Within Slack's limits**: the request is cut to 2,000 characters (and says so), each value
 *   to 200, the header to Slack's 150; the message stays far below 50 blocks.
 * - **block_ids change with the message**: Slack asks for new block_ids when a message is
 *   updated, so each is suffixed with the approval's status and number of decisions.
 */

/** The action_ids of the message's buttons, for the interactivity endpoint to route presses. */
export const SLACK_APPROVAL_ACTIONS = {
  approve: 'gatehouse_approve',
  reject: 'gatehouse_reject',
  /** A link button: Slack opens the page, and still tells the endpoint it was pressed. */
  review: 'gatehouse_review',
} as const;

export interface SlackMessage {
  /** The notification and fallback text (shown where blocks cannot be). */
  text: string;
  blocks: KnownBlock[];
}

/** Slack's header block takes at most 150 characters of plain text. */
const HEADER_CHARACTERS = 150;

/** `&`, `<` and `>` as Slack's formatting guide asks, so text from a call is never a control. */
export function slackEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A value for a mrkdwn field: on one line, cut, escaped. */
const value = (text: string): string => slackEscape(oneLine(text));

/**
 * A time as Slack shows it in each reader's own time zone (`<!date^…>` in mrkdwn, from Slack's
 * formatting guide), with UTC as the fallback for clients that cannot.
 */
function slackDate(iso: string): string {
  const seconds = Math.floor(new Date(iso).getTime() / 1000);
  if (!Number.isFinite(seconds)) return value(iso);
  return `<!date^${String(seconds)}^{date_short_pretty} {time}|${utcMinute(iso)}>`;
}

const field = (label: string, text: string): MrkdwnElement => ({
  type: 'mrkdwn',
  text: `*${label}*\n${text}`,
});

/** The facts of the call: who asks, for whom, what, under which rule, until when. */
function facts(approval: ApprovalView, blockId: string): SectionBlock {
  const fields: MrkdwnElement[] = [
    field('Agent', value(approval.agent_id)),
    field('User', value(approval.user)),
    field('Action', `${value(approval.action)} (${value(approval.scope)})`),
    field('Policy', `${value(approval.policy.id)} v${String(approval.policy.version)}`),
    field('Rule', value(approval.policy.rule)),
    field(
      approval.status === 'pending' ? 'Expires' : 'Was to expire',
      slackDate(approval.expires_at),
    ),
    field('Approvals', value(tallyText(approval))),
  ];
  if (approval.requested_from.length > 0) {
    fields.push(field('Asked of', value(approval.requested_from.join(', '))));
  }
  return { type: 'section', block_id: blockId, fields };
}

/** What will run, as typed: a preformatted rich text run, with a note when it was cut. */
function request(approval: ApprovalView, iteration: string): KnownBlock[] {
  const shown = shownRequest(approval);
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      block_id: `request_title.${iteration}`,
      text: { type: 'mrkdwn', text: `*${shown.title}*` },
    },
    {
      type: 'rich_text',
      block_id: `request.${iteration}`,
      elements: [
        { type: 'rich_text_preformatted', elements: [{ type: 'text', text: shown.text }] },
      ],
    } satisfies RichTextBlock,
  ];
  if (shown.cut) {
    blocks.push({
      type: 'context',
      block_id: `request_cut.${iteration}`,
      elements: [
        {
          type: 'mrkdwn',
          text: `Showing the first ${SHOWN_REQUEST_CHARACTERS.toLocaleString('en')} of ${shown.length.toLocaleString('en')} characters: the review page shows all of it.`,
        },
      ],
    } satisfies ContextBlock);
  }
  return blocks;
}

/** Slack's limit for one text object, which the decisions share. */
const TEXT_OBJECT_CHARACTERS = 3_000;

/** Every decision so far, oldest first, a line each, as many whole lines as Slack's limit holds. */
function decisions(approval: ApprovalView, iteration: string): KnownBlock[] {
  const made = approval.decisions ?? [];
  if (made.length === 0) return [];
  const lines: string[] = [];
  for (const [index, d] of made.entries()) {
    const line = `${d.decision === 'approve' ? 'Approved' : 'Rejected'} by ${slackEscape(deciderText(d))}, ${slackDate(d.at)}`;
    const rest = `and ${String(made.length - index)} more on the review page`;
    const length = [...lines, line, rest].join('\n').length;
    if (length > TEXT_OBJECT_CHARACTERS) {
      lines.push(rest);
      break;
    }
    lines.push(line);
  }
  return [
    {
      type: 'context',
      block_id: `decisions.${iteration}`,
      elements: [{ type: 'mrkdwn', text: lines.join('\n') }],
    } satisfies ContextBlock,
  ];
}

function reviewButton(reviewUrl: string, label: string): Button {
  return {
    type: 'button',
    action_id: SLACK_APPROVAL_ACTIONS.review,
    text: { type: 'plain_text', text: label },
    url: reviewUrl,
  };
}

const headerBlock = (text: string, iteration: string): HeaderBlock => ({
  type: 'header',
  block_id: `header.${iteration}`,
  text: { type: 'plain_text', text: oneLine(text, HEADER_CHARACTERS) },
});

const iterationOf = (approval: ApprovalView): string =>
  `${approval.status}.${String((approval.decisions ?? []).length)}`;

/** The message asking for a decision, with the tally so far when some have decided. */
export function slackApprovalMessage(approval: ApprovalView, reviewUrl: string): SlackMessage {
  const iteration = iterationOf(approval);
  const action = oneLine(approval.action);
  const call = `${action} for ${oneLine(approval.user)}`;
  const buttons: ActionsBlock = {
    type: 'actions',
    block_id: `decide.${iteration}`,
    elements: [
      {
        type: 'button',
        action_id: SLACK_APPROVAL_ACTIONS.approve,
        text: { type: 'plain_text', text: 'Approve' },
        style: 'primary',
        value: approval.id,
        confirm: {
          title: { type: 'plain_text', text: 'Approve this call?' },
          text: { type: 'plain_text', text: cutText(`${call} will run.`, 300).text },
          confirm: { type: 'plain_text', text: 'Approve' },
          deny: { type: 'plain_text', text: 'Cancel' },
        },
      },
      {
        type: 'button',
        action_id: SLACK_APPROVAL_ACTIONS.reject,
        text: { type: 'plain_text', text: 'Reject' },
        style: 'danger',
        value: approval.id,
        confirm: {
          title: { type: 'plain_text', text: 'Reject this call?' },
          text: { type: 'plain_text', text: cutText(`${call} will not run.`, 300).text },
          confirm: { type: 'plain_text', text: 'Reject' },
          deny: { type: 'plain_text', text: 'Cancel' },
        },
      },
      reviewButton(reviewUrl, 'Review'),
    ],
  };
  return {
    text: slackEscape(
      cutText(`Approval needed: ${oneLine(approval.agent_id)} asks to run ${call}`, 1_000).text,
    ),
    blocks: [
      headerBlock(`Approval needed: ${action}`, iteration),
      facts(approval, `facts.${iteration}`),
      ...request(approval, iteration),
      ...decisions(approval, iteration),
      buttons,
    ],
  };
}

/**
 * The message once the approval is settled (approved, rejected, expired or withdrawn): who
 * decided and the tally, with no buttons left to press; the review page stays one click away.
 */
export function slackDecidedMessage(approval: ApprovalView, reviewUrl: string): SlackMessage {
  const iteration = iterationOf(approval);
  const word = settledWord(approval.status);
  const action = oneLine(approval.action);
  const by = approval.decided_by ? ` by ${oneLine(approval.decided_by)}` : '';
  const when = approval.decided_at ? `, ${slackDate(approval.decided_at)}` : '';
  return {
    text: slackEscape(cutText(`${word}${by}: ${action} for ${oneLine(approval.user)}`, 1_000).text),
    blocks: [
      headerBlock(`${word}: ${action}`, iteration),
      {
        type: 'section',
        block_id: `outcome.${iteration}`,
        text: {
          type: 'mrkdwn',
          text: `*${word}*${slackEscape(by)}${when}. ${value(tallyText(approval))}.`,
        },
      },
      facts(approval, `facts.${iteration}`),
      ...request(approval, iteration),
      ...decisions(approval, iteration),
      {
        type: 'actions',
        block_id: `open.${iteration}`,
        elements: [reviewButton(reviewUrl, 'Open the review page')],
      },
    ],
  };
}
