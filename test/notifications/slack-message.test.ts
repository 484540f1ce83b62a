import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { LogLevel, WebClient } from '@slack/web-api';
import {
  SLACK_APPROVAL_ACTIONS,
  slackApprovalMessage,
  slackDecidedMessage,
  type SlackMessage,
} from '../../activities/notifications/slack-message.js';
import {
  blockKitProblems,
  interactivityPayload,
  MESSAGE_BLOCKS_MAX,
  startSlackStandin,
  type SlackStandin,
} from '../../infra/slack-standin/index.js';
import { stopsAfterAll } from '../support/stops.js';
import {
  aliceApproves,
  approvedApproval,
  HOSTILE,
  hostileApproval,
  pendingApproval,
  REVIEW_URL,
} from './chat-approval-fixtures.js';

type Json = Record<string, unknown>;

const blocksOfType = (message: SlackMessage, type: string): Json[] =>
  message.blocks.filter((b) => b.type === type) as unknown as Json[];

/** Every button of the message, wherever it is. */
function buttons(message: SlackMessage): Json[] {
  return blocksOfType(message, 'actions').flatMap((b) => b.elements as Json[]);
}

/** Every mrkdwn text of the message (fields, section text, context), where Slack parses markup. */
function mrkdwnTexts(message: SlackMessage): string[] {
  const texts: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      const object = value as Json;
      if (object.type === 'mrkdwn' && typeof object.text === 'string') texts.push(object.text);
      Object.values(object).forEach(visit);
    }
  };
  visit(message.blocks);
  return texts;
}

/** The text of the preformatted request. */
function requestShown(message: SlackMessage): string {
  const [richText] = blocksOfType(message, 'rich_text');
  const [part] = (richText?.elements ?? []) as Json[];
  const [run] = (part?.elements ?? []) as Json[];
  return typeof run?.text === 'string' ? run.text : '';
}

/** Characters as Slack counts them. */
const characters = (text: string): number => Array.from(text).length;

describe('the approval message', () => {
  const message = slackApprovalMessage(pendingApproval(), REVIEW_URL);

  it('has a header, the facts, what will run, and Approve, Reject and Review', () => {
    expect(message.blocks.map((b) => b.type)).toEqual([
      'header',
      'section',
      'section',
      'rich_text',
      'actions',
    ]);
    expect(message.blocks[0]).toMatchObject({
      type: 'header',
      text: { type: 'plain_text', text: 'Approval needed: acme.delete_task' },
    });
    const facts = (message.blocks[1] as unknown as Json).fields as Json[];
    expect(facts.map((f) => f.text)).toEqual([
      '*Agent*\ndemo-agent',
      '*User*\nu_123',
      '*Action*\nacme.delete_task (destructive)',
      '*Policy*\ndefault v2',
      '*Rule*\nrule (app acme, scope destructive)',
      '*Expires*\n<!date^1772530200^{date_short_pretty} {time}|2026-03-03 09:30 UTC>',
      '*Approvals*\n0 of 2 approvals, 2 more needed',
      '*Asked of*\ngroup:approvers, group:finance',
    ]);
    expect(requestShown(message)).toBe(
      JSON.stringify({ id: 't_42', reason: 'duplicate' }, null, 2),
    );
    expect(message.text).toBe('Approval needed: demo-agent asks to run acme.delete_task for u_123');
  });

  it('Approve and Reject carry the approval id and nothing else; Review opens the signed page', () => {
    expect(buttons(message).map((b) => [b.action_id, b.value, b.url, b.style])).toEqual([
      [SLACK_APPROVAL_ACTIONS.approve, pendingApproval().id, undefined, 'primary'],
      [SLACK_APPROVAL_ACTIONS.reject, pendingApproval().id, undefined, 'danger'],
      [SLACK_APPROVAL_ACTIONS.review, undefined, REVIEW_URL, undefined],
    ]);
    // The signed link appears once, as the Review button's URL, never in a value or text.
    expect(JSON.stringify(message).split(REVIEW_URL)).toHaveLength(2);
  });

  it('asks before deciding, naming the call', () => {
    expect(buttons(message)[0]?.confirm).toEqual({
      title: { type: 'plain_text', text: 'Approve this call?' },
      text: { type: 'plain_text', text: 'acme.delete_task for u_123 will run.' },
      confirm: { type: 'plain_text', text: 'Approve' },
      deny: { type: 'plain_text', text: 'Cancel' },
    });
    expect((buttons(message)[1]?.confirm as Json).text).toEqual({
      type: 'plain_text',
      text: 'acme.delete_task for u_123 will not run.',
    });
  });

  it('is within Slack’s Block Kit limits', () => {
    expect(blockKitProblems(message.blocks)).toEqual([]);
  });

  it('shows the tally and who approved so far', () => {
    const half = slackApprovalMessage(
      pendingApproval({ decisions: [aliceApproves], approvals_needed: 1 }),
      REVIEW_URL,
    );
    expect(mrkdwnTexts(half)).toContain('*Approvals*\n1 of 2 approvals, 1 more needed');
    expect(mrkdwnTexts(half)).toContain(
      'Approved by Alice Approver (person:alice@example.com), <!date^1772444400^{date_short_pretty} {time}|2026-03-02 09:40 UTC>',
    );
    // Slack asks for new block_ids when a message is updated.
    const ids = (m: SlackMessage): string[] => m.blocks.map((b) => b.block_id ?? '');
    expect(ids(half).filter((id) => ids(message).includes(id))).toEqual([]);
  });

  it('shows a proxied request as it will be sent: request line, forwarded headers, body', () => {
    const proxied = slackApprovalMessage(
      pendingApproval({
        action: 'acme.proxy',
        request: {
          method: 'PATCH',
          path: 'tasks/t_1',
          query: 'notify=true',
          headers: { 'content-type': 'application/json', 'x-request': 'r1' },
          body: {
            bytes: 17,
            sha256: 'ab',
            encoding: 'utf8',
            content: '{"title":"Ship"}',
            truncated: false,
          },
        },
      }),
      REVIEW_URL,
    );
    expect(mrkdwnTexts(proxied)).toContain('*Request that will be sent*');
    expect(requestShown(proxied)).toBe(
      'PATCH /tasks/t_1?notify=true\ncontent-type: application/json\nx-request: r1\n\n{"title":"Ship"}',
    );
  });
});

describe('text from the call is never markup in Slack', () => {
  const hostile = hostileApproval();
  const message = slackApprovalMessage(hostile, REVIEW_URL);

  it('stays within every Block Kit limit however long and odd the values are', () => {
    expect(blockKitProblems(message.blocks)).toEqual([]);
    expect(message.blocks.length).toBeLessThan(MESSAGE_BLOCKS_MAX);
    expect(
      blockKitProblems(slackDecidedMessage({ ...hostile, status: 'rejected' }, REVIEW_URL).blocks),
    ).toEqual([]);
  });

  it('escapes &, < and > in every mrkdwn text and in the notification text: no mention, no masked link', () => {
    const plain = slackApprovalMessage(
      pendingApproval({ user: HOSTILE, agent_id: HOSTILE }),
      REVIEW_URL,
    );
    for (const text of [...mrkdwnTexts(plain), plain.text]) {
      // What Slack would read as a control: `<` opening anything but our own date tokens.
      expect(text.replace(/<!date\^\d+\^\{date_short_pretty\} \{time\}\|[^<>]*>/g, '')).not.toMatch(
        /[<>]/,
      );
    }
    expect(mrkdwnTexts(plain)).toContain(
      '*User*\n&lt;!channel&gt; &amp; &lt;https://evil.example|click here&gt; *bold* [link](https://evil.example) \\u202eevil\\u000aSecond line\\u0000\\u2028',
    );
  });

  it('puts controls and reordering marks in view, escaped, and keeps a value on one line', () => {
    const plain = slackApprovalMessage(pendingApproval({ user: 'u\u202e1\n2' }), REVIEW_URL);
    expect(mrkdwnTexts(plain)).toContain('*User*\nu\\u202e1\\u000a2');
  });

  it('shows at most 2,000 characters of the request, cut whole characters, and says how many there were', () => {
    const shown = requestShown(message);
    expect(characters(shown)).toBe(2000);
    expect(shown.endsWith('…')).toBe(true);
    expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    // JSON already writes U+0000 and line feeds escaped; the separators and marks are escaped here.
    const whole = JSON.stringify(hostile.request.input, null, 2);
    const [note] = blocksOfType(message, 'context');
    expect((note?.elements as Json[])[0]?.text).toBe(
      `Showing the first 2,000 of ${characters(whole.replace(/[\u2028\u202e]/g, '\\u2028')).toLocaleString('en')} characters: the review page shows all of it.`,
    );
  });

  it('shows every decision of a ten-person quorum, or as many as fit, then how many more', () => {
    const [, decisions] = blocksOfType(message, 'context');
    const text = (decisions?.elements as Json[])[0]?.text as string;
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toMatch(/^Approved by /);
    expect(text).toMatch(/(Rejected by .*|and \d+ more on the review page)$/);
  });
});

describe('the decided message', () => {
  const decided = slackDecidedMessage(approvedApproval(), REVIEW_URL);

  it('says who decided and the tally, and has no Approve or Reject left', () => {
    expect(decided.blocks[0]).toMatchObject({
      type: 'header',
      text: { text: 'Approved: acme.delete_task' },
    });
    expect(mrkdwnTexts(decided)[0]).toBe(
      '*Approved* by person:bob@example.com, <!date^1772444700^{date_short_pretty} {time}|2026-03-02 09:45 UTC>. 2 of 2 approvals.',
    );
    expect(buttons(decided).map((b) => [b.action_id, b.url])).toEqual([
      [SLACK_APPROVAL_ACTIONS.review, REVIEW_URL],
    ]);
    expect(JSON.stringify(decided)).not.toContain(approvedApproval().id);
    expect(decided.text).toBe('Approved by person:bob@example.com: acme.delete_task for u_123');
    expect(blockKitProblems(decided.blocks)).toEqual([]);
  });

  it('names an expired or withdrawn approval as such, with no decider', () => {
    const expired = slackDecidedMessage(
      pendingApproval({ status: 'expired', approvals_needed: 0 }),
      REVIEW_URL,
    );
    expect(expired.blocks[0]).toMatchObject({ text: { text: 'Expired: acme.delete_task' } });
    const withdrawn = slackDecidedMessage(
      pendingApproval({ status: 'cancelled', approvals_needed: 0 }),
      REVIEW_URL,
    );
    expect(mrkdwnTexts(withdrawn)[0]).toBe('*Withdrawn*. 0 of 2 approvals.');
  });
});

describe('posted to Slack (the stand-in) with the official client', () => {
  const TOKEN = 'xoxb-builder-test';
  const SECRET = 'builder-test-signing-secret';
  let slack: SlackStandin;
  let client: WebClient;
  const started = stopsAfterAll();

  beforeAll(async () => {
    slack = started.add(
      await startSlackStandin({
        token: TOKEN,
        users: [{ id: 'U0ALICE', email: 'alice@example.com', name: 'alice' }],
      }),
    );
    client = new WebClient(TOKEN, {
      slackApiUrl: slack.url,
      logLevel: LogLevel.ERROR,
      retryConfig: { retries: 0 },
    });
  });

  it('is posted, updated once decided, and its Approve press carries the approval id', async () => {
    const approval = hostileApproval();
    const pending = slackApprovalMessage(approval, REVIEW_URL);
    const posted = await client.chat.postMessage({ channel: 'U0ALICE', ...pending });
    expect(posted.ok).toBe(true);
    const channel = posted.channel ?? '';
    const ts = posted.ts ?? '';

    const presses: string[] = [];
    const endpoint = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        presses.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    started.push(() => new Promise((resolve) => endpoint.close(resolve)));
    const url = `http://127.0.0.1:${String((endpoint.address() as AddressInfo).port)}/`;
    const pressed = await slack.pressButton(
      { user: 'U0ALICE', channel, ts, actionId: SLACK_APPROVAL_ACTIONS.approve },
      { url, signingSecret: SECRET },
    );
    expect(pressed.payload.actions).toEqual([
      expect.objectContaining({ action_id: SLACK_APPROVAL_ACTIONS.approve, value: approval.id }),
    ]);
    expect(interactivityPayload(presses[0] ?? '')).toEqual(pressed.payload);

    const decided = slackDecidedMessage(
      { ...approval, status: 'rejected', decided_by: 'person:alice@example.com' },
      REVIEW_URL,
    );
    const updated = await client.chat.update({ channel, ts, ...decided });
    expect(updated.ok).toBe(true);
    const stored = slack.messages().find((m) => m.ts === ts);
    expect(stored?.blocks).toEqual(decided.blocks);
    expect(stored?.updates).toBe(1);
  });
});
