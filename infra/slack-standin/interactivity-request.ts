import { createHmac } from 'node:crypto';

/**
 * A button press as Slack sends it to an app's interactivity Request URL, built from Slack's
 * published contract: the interaction payload reference for `block_actions`
 * (docs.slack.dev/reference/interaction-payloads/block_actions-payload) and "Verifying requests
 * from Slack" (docs.slack.dev/authentication/verifying-requests-from-slack).
 *
 * In Slack's words, restated: the request is a POST whose body is form-encoded with one field,
 * `payload`, holding the interaction as JSON. Slack signs it with the app's signing secret: the
 * base string is the version `v0`, the request timestamp (Unix seconds, also sent as
 * `X-Slack-Request-Timestamp`) and the raw body, joined by colons; the HMAC-SHA256 of it, in hex
 * and prefixed with `v0=`, is sent as `X-Slack-Signature`.
 *
 * This module is deliberately independent of Gatehouse's verifier (api/slack/request-signature.ts),
 * so a test where the two agree checks the scheme, not one function against itself; both are also
 * checked against the worked example in Slack's documentation.
 */

export interface BlockActionsUser {
  id: string;
  /** Slack's handle and display name; the stand-in uses the seeded name for both. */
  username: string;
  name: string;
  team_id: string;
}

export interface BlockActionsAction {
  type: 'button';
  action_id: string;
  block_id: string;
  text: { type: 'plain_text'; text: string; emoji?: boolean };
  value?: string;
  url?: string;
  style?: 'primary' | 'danger';
  /** When the button was pressed, as a Slack timestamp string ("seconds.micros"). */
  action_ts: string;
}

/** The parts of a `block_actions` payload a message button press carries. */
export interface BlockActionsPayload {
  type: 'block_actions';
  team: { id: string; domain: string };
  user: BlockActionsUser;
  api_app_id: string;
  /** Slack's deprecated verification token: still sent, never to be trusted (signatures are). */
  token: string;
  container: { type: 'message'; message_ts: string; channel_id: string; is_ephemeral: boolean };
  trigger_id: string;
  channel: { id: string; name: string };
  enterprise: null;
  is_enterprise_install: false;
  /** The message the button is in, as it was when pressed. */
  message: Record<string, unknown>;
  state: { values: Record<string, never> };
  /** Where the app may answer this interaction (replace or delete the message, or answer). */
  response_url: string;
  actions: BlockActionsAction[];
}

export const SLACK_SIGNATURE_VERSION = 'v0';

/** `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` under the signing secret. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  const base = `${SLACK_SIGNATURE_VERSION}:${timestamp}:${rawBody}`;
  const mac = createHmac('sha256', signingSecret).update(base, 'utf8').digest('hex');
  return `${SLACK_SIGNATURE_VERSION}=${mac}`;
}

export interface SignedSlackRequest {
  /** The raw body, exactly the bytes the signature covers. */
  body: string;
  headers: {
    'content-type': 'application/x-www-form-urlencoded';
    'x-slack-request-timestamp': string;
    'x-slack-signature': string;
  };
}

/**
 * The interactivity request Slack would send for this payload, signed at `timestampSeconds`
 * (the present by default; a test of stale or future requests passes another).
 */
export function signedInteractivityRequest(
  payload: BlockActionsPayload,
  signingSecret: string,
  timestampSeconds: number = Math.floor(Date.now() / 1000),
): SignedSlackRequest {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(timestampSeconds);
  return {
    body,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': slackSignature(signingSecret, timestamp, body),
    },
  };
}

/** The payload of an interactivity request body (`payload=<json>`), or null when it has none. */
export function interactivityPayload(rawBody: string): unknown {
  const payload = new URLSearchParams(rawBody).get('payload');
  return payload === null ? null : (JSON.parse(payload) as unknown);
}
