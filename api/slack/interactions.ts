import express, { Router } from 'express';
import type { WebClient } from '@slack/web-api';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { openNotificationChannels } from '../../activities/db/notification-channels.js';
import { slackClient } from '../../activities/notifications/send-slack.js';
import type { Logger } from '../../infra/logger.js';
import { decideApproval } from '../approvals/decide.js';
import type { ApiDeps } from '../deps.js';
import {
  ApiError,
  ConflictError,
  InsufficientAccessError,
  InvalidRequestError,
  NotFoundError,
} from '../errors.js';
import { callWorkflowsFor, type CallWorkflows } from '../temporal/call-workflows.js';
import { readSlackPress, type SlackPress } from './interaction-payload.js';
import { acceptSlackRequest } from './request-signature.js';
import { slackPresser } from './slack-presser.js';

/**
 * Where Slack sends the presses of an approval message's buttons (the Slack app's Interactivity
 * Request URL): `POST /slack/<environment>/interactions`. Slack waits three seconds for an answer,
 * so the request is answered 200 as soon as it is known to be Slack's and readable; the decision
 * follows, and its outcome reaches the presser alone (an ephemeral message). The message itself is
 * rewritten by the call's workflow, as after any decision.
 */

/** Interaction payloads are small; Slack's own messages stay far below this. */
const BODY_LIMIT_BYTES = 256 * 1024;

export function slackInteractionRoutes(deps: ApiDeps): Router {
  const router = Router();
  const calls = callWorkflowsFor(deps);

  router.post(
    '/slack/:environment/interactions',
    express.raw({ type: () => true, limit: BODY_LIMIT_BYTES }),
    async (req, res) => {
      const name = req.params.environment;
      const environment = await findEnvironmentByName(deps.sql, name);
      const channels = environment
        ? await openNotificationChannels(deps.sql, deps.config.encryption, environment.id)
        : null;
      if (!environment || !channels?.slack) throw new NotFoundError(`A Slack app in ${name}`);
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const header = (key: string) => {
        const value = req.headers[key];
        return Array.isArray(value) ? value[0] : value;
      };
      const check = await acceptSlackRequest(
        deps.sql,
        {
          rawBody,
          timestamp: header('x-slack-request-timestamp'),
          signature: header('x-slack-signature'),
        },
        channels.slack.signingSecret,
      );
      if (!check.ok) {
        req.log.warn({ refusal: check.refusal, environment: name }, 'Slack request refused');
        throw new ApiError(
          'invalid_api_key',
          "The request is not signed by this environment's Slack app, or is stale or a replay.",
        );
      }
      const press = readSlackPress(rawBody);
      if ('invalid' in press) throw new InvalidRequestError(press.invalid);
      res.status(200).end();
      if (press.kind !== 'decide') return;
      const client = slackClient(channels.slack);
      const log = req.log.child({ approvalId: press.approvalId, slackUser: press.userId });
      // After the answer: nothing the caller waits for, and every failure ends in a log line.
      void decideFromSlack(deps, calls, client, environment, press, log).catch((error: unknown) => {
        log.error({ err: error }, 'Slack press not handled');
      });
    },
  );
  return router;
}

async function decideFromSlack(
  deps: ApiDeps,
  calls: CallWorkflows,
  client: WebClient,
  environment: { id: string; name: string },
  press: Extract<SlackPress, { kind: 'decide' }>,
  log: Logger,
): Promise<void> {
  const tell = async (text: string) => {
    if (press.channelId === null) return;
    await client.chat
      .postEphemeral({ channel: press.channelId, user: press.userId, text })
      .catch((error: unknown) => {
        log.warn({ err: error }, 'Slack ephemeral answer not posted');
      });
  };
  const presser = await slackPresser(deps.sql, client, environment, press.userId);
  if (!presser.ok) {
    log.info({ reason: presser.reason }, 'Slack press refused');
    await tell(presser.reason);
    return;
  }
  try {
    const decided = await decideApproval(deps.sql, calls, {
      environmentId: environment.id,
      approvalId: press.approvalId,
      decision: press.decision,
      decider: presser.decider,
    });
    log.info({ decision: press.decision, status: decided.status }, 'approval decided in Slack');
    const needed = decided.approvals_needed ?? 0;
    await tell(
      decided.status === 'pending'
        ? `Your approval is recorded; ${needed === 1 ? '1 more approval is' : `${String(needed)} more approvals are`} needed before the call runs.`
        : decided.status === 'approved'
          ? 'Approved: the agent’s next identical call runs once.'
          : 'Rejected: the call does not run.',
    );
  } catch (error) {
    if (
      error instanceof InsufficientAccessError ||
      error instanceof ConflictError ||
      error instanceof NotFoundError ||
      error instanceof InvalidRequestError
    ) {
      log.info({ reason: error.message }, 'Slack press refused');
      await tell(`You cannot decide this approval: ${error.message}`);
      return;
    }
    log.warn({ err: error }, 'Slack decision failed');
    await tell(
      'Gatehouse could not record your decision just now. Press the button again shortly.',
    );
  }
}
