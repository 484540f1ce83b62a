import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  acceptSlackRequest,
  checkSlackSignature,
  SLACK_TIMESTAMP_TOLERANCE_SECONDS,
  type SlackSignedRequest,
  type SlackSignatureRefusal,
} from '../../api/slack/request-signature.js';
import {
  interactivityPayload,
  signedInteractivityRequest,
  slackSignature,
  type BlockActionsPayload,
} from '../../infra/slack-standin/interactivity-request.js';
import { createSql } from '../../infra/database/client.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The worked example of Slack's "Verifying requests from Slack": a slash command's body, its
 * timestamp, the signing secret and the signature Slack computed. Neither Gatehouse's verifier nor
 * the stand-in's signer wrote it, so both are checked against Slack and not only each other.
 */
const SLACK_EXAMPLE = {
  signingSecret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  body:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V' +
    '&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=' +
    '&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmib' +
    'IGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};

const SECRET = 'test-signing-secret-0123456789abcdef';
const NOW = new Date('2026-03-02T10:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;

/** A press on an approval message, as the stand-in builds it. */
function pressPayload(approvalId: string): BlockActionsPayload {
  return {
    type: 'block_actions',
    team: { id: 'T0GATEHOUSE', domain: 'gatehouse-standin' },
    user: { id: 'U0ALICE', username: 'alice', name: 'alice', team_id: 'T0GATEHOUSE' },
    api_app_id: 'A0GATEHOUSE',
    token: 'verification-token-deprecated',
    container: {
      type: 'message',
      message_ts: '1772445600.000001',
      channel_id: 'D0ALICE',
      is_ephemeral: false,
    },
    trigger_id: '1.2.abc',
    channel: { id: 'D0ALICE', name: 'directmessage' },
    enterprise: null,
    is_enterprise_install: false,
    message: { type: 'message', ts: '1772445600.000001', text: 'Approval needed' },
    state: { values: {} },
    response_url: 'http://127.0.0.1:1/actions/T0GATEHOUSE/1/abc',
    actions: [
      {
        type: 'button',
        action_id: 'gatehouse_approve',
        block_id: 'actions',
        text: { type: 'plain_text', text: 'Approve' },
        value: approvalId,
        style: 'primary',
        action_ts: '1772445601.000002',
      },
    ],
  };
}

function signedAt(timestampSeconds: number, payload = pressPayload('a1')): SlackSignedRequest {
  const request = signedInteractivityRequest(payload, SECRET, timestampSeconds);
  return {
    rawBody: Buffer.from(request.body, 'utf8'),
    timestamp: request.headers['x-slack-request-timestamp'],
    signature: request.headers['x-slack-signature'],
  };
}

describe("Slack's worked example", () => {
  it('is what the stand-in signs', () => {
    expect(
      slackSignature(SLACK_EXAMPLE.signingSecret, SLACK_EXAMPLE.timestamp, SLACK_EXAMPLE.body),
    ).toBe(SLACK_EXAMPLE.signature);
  });

  it('is accepted by the verifier at its own time, and refused with another secret', () => {
    const request: SlackSignedRequest = {
      rawBody: Buffer.from(SLACK_EXAMPLE.body),
      timestamp: SLACK_EXAMPLE.timestamp,
      signature: SLACK_EXAMPLE.signature,
    };
    const then = new Date(Number(SLACK_EXAMPLE.timestamp) * 1000 + 30_000);
    expect(checkSlackSignature(request, SLACK_EXAMPLE.signingSecret, then)).toEqual({
      ok: true,
      timestampSeconds: 1531420618,
      signature: SLACK_EXAMPLE.signature,
    });
    expect(checkSlackSignature(request, SECRET, then)).toEqual({
      ok: false,
      refusal: 'bad_signature',
    });
  });
});

describe('the stand-in signs an interactivity request as Slack does', () => {
  it('a form body with one field, payload, and the signature of v0:<timestamp>:<body>', () => {
    const payload = pressPayload('0198f2c4-7a1e-7c3b-9f21-5d0e8a6b4c12');
    const request = signedInteractivityRequest(payload, SECRET, NOW_SECONDS);
    expect([...new URLSearchParams(request.body).keys()]).toEqual(['payload']);
    expect(interactivityPayload(request.body)).toEqual(payload);
    // Computed here from the documented recipe, not by either module.
    const expected = createHmac('sha256', SECRET)
      .update(`v0:${String(NOW_SECONDS)}:${request.body}`)
      .digest('hex');
    expect(request.headers).toEqual({
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(NOW_SECONDS),
      'x-slack-signature': `v0=${expected}`,
    });
  });
});

describe('checkSlackSignature', () => {
  const good = signedAt(NOW_SECONDS);
  const tolerance = SLACK_TIMESTAMP_TOLERANCE_SECONDS;
  const flipped = (signature: string): string =>
    signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');

  const cases: [string, SlackSignedRequest, SlackSignatureRefusal | 'ok'][] = [
    ['a request the stand-in signed now', good, 'ok'],
    ['signed at the edge of the window, five minutes ago', signedAt(NOW_SECONDS - tolerance), 'ok'],
    ['signed five minutes ahead of our clock', signedAt(NOW_SECONDS + tolerance), 'ok'],
    ['one second older than the window', signedAt(NOW_SECONDS - tolerance - 1), 'stale_timestamp'],
    ['an hour old', signedAt(NOW_SECONDS - 3600), 'stale_timestamp'],
    [
      'one second beyond the window ahead',
      signedAt(NOW_SECONDS + tolerance + 1),
      'future_timestamp',
    ],
    ['no signature header', { ...good, signature: undefined }, 'missing_headers'],
    ['no timestamp header', { ...good, timestamp: undefined }, 'missing_headers'],
    ['an empty signature header', { ...good, signature: '' }, 'missing_headers'],
    [
      'a timestamp in milliseconds',
      { ...good, timestamp: `${good.timestamp ?? ''}000` },
      'malformed_timestamp',
    ],
    [
      'a timestamp that is not a number',
      { ...good, timestamp: 'yesterday' },
      'malformed_timestamp',
    ],
    ['a negative timestamp', { ...good, timestamp: '-1' }, 'malformed_timestamp'],
    [
      'one hex digit of the signature changed',
      { ...good, signature: flipped(good.signature ?? '') },
      'bad_signature',
    ],
    [
      'the signature in upper-case hex',
      { ...good, signature: `v0=${(good.signature ?? '').slice(3).toUpperCase()}` },
      'malformed_signature',
    ],
    [
      'another scheme version',
      { ...good, signature: `v1=${(good.signature ?? '').slice(3)}` },
      'malformed_signature',
    ],
    [
      'a signature cut short',
      { ...good, signature: (good.signature ?? '').slice(0, 40) },
      'malformed_signature',
    ],
    [
      'the timestamp header moved, the body and signature kept',
      { ...good, timestamp: String(NOW_SECONDS - 1) },
      'bad_signature',
    ],
    [
      'the body tampered with: another approval id',
      {
        ...good,
        rawBody: Buffer.from(
          signedInteractivityRequest(pressPayload('a2'), SECRET, NOW_SECONDS).body,
        ),
      },
      'bad_signature',
    ],
    [
      'the body tampered with: one byte appended',
      { ...good, rawBody: Buffer.concat([good.rawBody, Buffer.from('&')]) },
      'bad_signature',
    ],
    [
      'the body re-encoded (parsed and written again with %20 for spaces)',
      { ...good, rawBody: Buffer.from(good.rawBody.toString().replaceAll('+', '%20')) },
      'bad_signature',
    ],
    [
      'signed with another secret',
      {
        ...good,
        signature: slackSignature('another-secret', good.timestamp ?? '', good.rawBody.toString()),
      },
      'bad_signature',
    ],
  ];

  it.each(cases)('%s', (_what, request, outcome) => {
    const check = checkSlackSignature(request, SECRET, NOW);
    if (outcome === 'ok') expect(check.ok).toBe(true);
    else expect(check).toEqual({ ok: false, refusal: outcome });
  });

  it('reads the body as bytes: a body that is not UTF-8 is signed and checked as sent', () => {
    const rawBody = Buffer.from([0x70, 0x61, 0x79, 0x3d, 0xff, 0xfe]);
    const mac = createHmac('sha256', SECRET)
      .update(Buffer.concat([Buffer.from(`v0:${String(NOW_SECONDS)}:`), rawBody]))
      .digest('hex');
    const request = { rawBody, timestamp: String(NOW_SECONDS), signature: `v0=${mac}` };
    expect(checkSlackSignature(request, SECRET, NOW).ok).toBe(true);
  });
});

describe('acceptSlackRequest: the replay check, in Postgres', () => {
  let db: TestDatabase;
  const started = stopsAfterAll();

  beforeAll(async () => {
    db = started.add(await createTestDatabase());
  });

  it('accepts a request once and refuses the same request again within the window', async () => {
    const request = signedAt(NOW_SECONDS, pressPayload('replayed-once'));
    expect((await acceptSlackRequest(db.sql, request, SECRET, NOW)).ok).toBe(true);
    const later = new Date(NOW.getTime() + 60_000);
    expect(await acceptSlackRequest(db.sql, request, SECRET, later)).toEqual({
      ok: false,
      refusal: 'replayed',
    });
  });

  it('refuses a copy sent to another API process at the same time: one of two claims wins', async () => {
    const request = signedAt(NOW_SECONDS, pressPayload('raced'));
    const other = started.add(createTestDatabaseConnectionTo(db));
    const outcomes = await Promise.all([
      acceptSlackRequest(db.sql, request, SECRET, NOW),
      acceptSlackRequest(other.sql, request, SECRET, NOW),
    ]);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.refusal)).sort()).toEqual(['ok', 'replayed']);
  });

  it('does not take a refused request for a seen one: a bad signature claims nothing', async () => {
    const request = signedAt(NOW_SECONDS, pressPayload('bad-first'));
    const tampered = {
      ...request,
      signature: slackSignature('wrong', request.timestamp ?? '', 'x'),
    };
    expect(await acceptSlackRequest(db.sql, tampered, SECRET, NOW)).toEqual({
      ok: false,
      refusal: 'bad_signature',
    });
    expect((await acceptSlackRequest(db.sql, request, SECRET, NOW)).ok).toBe(true);
  });

  it('keeps a signature only while its timestamp is in the window, then forgets it', async () => {
    const request = signedAt(NOW_SECONDS, pressPayload('kept'));
    expect((await acceptSlackRequest(db.sql, request, SECRET, NOW)).ok).toBe(true);
    const kept = async (): Promise<number> => {
      const [row]: [{ count: number }?] = await db.sql`
        select count(*)::int as count from slack_request_signatures
        where signature = ${request.signature ?? ''}`;
      return row?.count ?? 0;
    };
    expect(await kept()).toBe(1);
    // Past the window Slack's own check refuses the copy; the next claim clears the row.
    const past = new Date((NOW_SECONDS + SLACK_TIMESTAMP_TOLERANCE_SECONDS + 1) * 1000);
    expect(await acceptSlackRequest(db.sql, request, SECRET, past)).toEqual({
      ok: false,
      refusal: 'stale_timestamp',
    });
    const fresh = signedAt(NOW_SECONDS + 400, pressPayload('fresh'));
    expect((await acceptSlackRequest(db.sql, fresh, SECRET, past)).ok).toBe(true);
    expect(await kept()).toBe(0);
  });
});

/** A second connection pool to the same database: another API process, as Postgres sees it. */
function createTestDatabaseConnectionTo(db: TestDatabase): {
  sql: TestDatabase['sql'];
  close(): Promise<void>;
} {
  const sql = createSql(db.url, { max: 1 });
  return { sql, close: () => sql.end({ timeout: 5 }) };
}
