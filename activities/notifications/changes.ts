import type { z } from 'zod';
import type { Sql } from '../../infra/database/client.js';
import type { Keyring } from '../../infra/encryption.js';
import {
  NOTIFICATION_ACTIONS,
  recordNotificationChange,
  type NotificationActor,
} from '../audit/notification-changes.js';
import {
  deleteNotificationChannel,
  setNotificationChannel,
  type NotificationChannelInput,
} from '../db/notification-channels.js';
import { addNotificationOptOut, removeNotificationOptOut } from '../db/notification-opt-outs.js';
import { replaceNotificationRoutes } from '../db/notification-routes.js';
import { channelAnswer, routesAnswer, type ChannelAnswer, type RoutesAnswer } from './answers.js';
import {
  slackApiBaseUrlProblem,
  smtpHostProblem,
  teamsWebhookUrlProblem,
} from './channel-addresses.js';
import { KIND_LABELS, type NotificationKind } from './kinds.js';
import { routeTargets, type setRoutesBody } from './route-input.js';

/**
 * The checked changes of the approval notifications, the same through the API and the command
 * line: each input's address rules (NOTIFY_ALLOW_PRIVATE), then the change, then its audit event.
 * A refusal is a list of problems by field, which each caller words in its own way.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };
export interface Issue {
  path: string;
  message: string;
}

export interface NotificationSettings {
  keyring: Keyring;
  /** NOTIFY_ALLOW_PRIVATE. */
  allowPrivate: boolean;
}

/** Recorded with what is set: a key's agent, or the CLI (no key agent). */
function setterOf(actor: NotificationActor) {
  return {
    label: actor.agentId,
    keyAgentId: actor.channel === 'api' ? actor.agentId : null,
  };
}

const refused = (issues: Issue[]): { ok: false; issues: Issue[] } => ({ ok: false, issues });

async function addressIssues(input: NotificationChannelInput, allowPrivate: boolean) {
  if (input.kind === 'email') {
    const problem = await smtpHostProblem(input.host, input.security, allowPrivate);
    return problem ? [{ path: 'host', message: problem }] : [];
  }
  if (input.kind === 'slack') {
    const problem = slackApiBaseUrlProblem(input.apiBaseUrl, allowPrivate);
    return problem ? [{ path: 'api_base_url', message: problem }] : [];
  }
  return [];
}

/** Sets the environment's channel of the input's kind (README "Tell approvers where they work"). */
export async function changeNotificationChannel(
  sql: Sql,
  settings: NotificationSettings,
  actor: NotificationActor,
  input: NotificationChannelInput,
): Promise<Checked<ChannelAnswer>> {
  const issues = await addressIssues(input, settings.allowPrivate);
  if (issues.length > 0) return refused(issues);
  const result = await setNotificationChannel(
    sql,
    settings.keyring,
    actor.environmentId,
    input,
    setterOf(actor),
  );
  if (result.outcome === 'secret_required') {
    return refused([{ path: result.field, message: result.why }]);
  }
  const answer = channelAnswer(result.channel);
  await recordNotificationChange(sql, actor, {
    action: NOTIFICATION_ACTIONS.channels,
    reason: `the ${KIND_LABELS[input.kind]} channel is set`,
    details: { set: answer },
  });
  return { ok: true, value: answer };
}

/** False when the environment had no channel of that kind (nothing recorded then). */
export async function removeNotificationChannel(
  sql: Sql,
  actor: NotificationActor,
  kind: NotificationKind,
): Promise<boolean> {
  if (!(await deleteNotificationChannel(sql, actor.environmentId, kind))) return false;
  await recordNotificationChange(sql, actor, {
    action: NOTIFICATION_ACTIONS.channels,
    reason: `the ${KIND_LABELS[kind]} channel is removed: its routes deliver nothing`,
    details: { removed: kind },
  });
  return true;
}

/**
 * Replaces the audience's routes of one kind with `targets` (none: it is told nothing that way),
 * each Teams webhook checked against the address rules first.
 */
export async function changeNotificationRoutes(
  sql: Sql,
  settings: NotificationSettings,
  actor: NotificationActor,
  audience: string,
  kind: NotificationKind,
  body: z.infer<typeof setRoutesBody>,
): Promise<Checked<RoutesAnswer>> {
  const targets = routeTargets(kind, body.targets);
  if (!targets.ok) return refused(targets.issues);
  const issues: Issue[] = [];
  for (const [index, target] of targets.targets.entries()) {
    if (target.type !== 'webhook') continue;
    const problem = await teamsWebhookUrlProblem(target.url, settings.allowPrivate);
    if (problem) issues.push({ path: `targets.${String(index)}.webhook_url`, message: problem });
  }
  if (issues.length > 0) return refused(issues);
  const routes = await replaceNotificationRoutes(
    sql,
    settings.keyring,
    actor.environmentId,
    audience,
    kind,
    targets.targets,
    setterOf(actor),
  );
  const answer = routesAnswer(routes)[0] ?? { audience, kind, targets: [] };
  await recordNotificationChange(sql, actor, {
    action: NOTIFICATION_ACTIONS.routes,
    reason:
      answer.targets.length === 0
        ? `${audience} is told nothing through ${KIND_LABELS[kind]} now`
        : `${audience} is told through ${KIND_LABELS[kind]} at ${String(answer.targets.length)} target(s) now`,
    // Teams webhooks by their host only, as answers show them.
    details: { audience: answer.audience, kind, targets: answer.targets },
  });
  return { ok: true, value: answer };
}

/**
 * Opts a person out of a kind of channel (`optedOut` true), or back in. Answers whether anything
 * changed; only a change is recorded.
 */
export async function changeNotificationOptOut(
  sql: Sql,
  actor: NotificationActor,
  email: string,
  kind: NotificationKind,
  optedOut: boolean,
): Promise<boolean> {
  const changed = optedOut
    ? await addNotificationOptOut(sql, actor.environmentId, email, kind, actor.agentId)
    : await removeNotificationOptOut(sql, actor.environmentId, email, kind);
  if (!changed) return false;
  await recordNotificationChange(sql, actor, {
    action: NOTIFICATION_ACTIONS.optOuts,
    reason: optedOut
      ? `${email} opted out of ${KIND_LABELS[kind]}`
      : `${email} is told through ${KIND_LABELS[kind]} again`,
    details: { email: email.toLowerCase(), kind, opted_out: optedOut },
  });
  return true;
}
