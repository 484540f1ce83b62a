import type { WebClient } from '@slack/web-api';
import { findPersonByEmail } from '../../activities/db/people.js';
import { rolesOfGroups } from '../../activities/db/role-mappings.js';
import type { Sql } from '../../infra/database/client.js';
import type { Decider } from '../../workflows/decider-rules.js';
import { ROLE_ALLOWS } from '../people/console-viewer.js';
import { roleGroupsOf } from '../people/role-groups.js';

/**
 * Who pressed a button of an approval's Slack message, as the decision rules know people: the
 * person Gatehouse knows by the e-mail Slack says this user confirmed, holding the approver role in
 * the environment (as deciding in the console needs). Slack's word on the e-mail is what the
 * signed request carries as far as identity goes; an address nobody confirmed proves nothing.
 */

export type SlackPresser = { ok: true; decider: Decider } | { ok: false; reason: string };

export async function slackPresser(
  sql: Sql,
  client: WebClient,
  environment: { id: string; name: string },
  userId: string,
): Promise<SlackPresser> {
  const info = await client.users.info({ user: userId });
  const user = info.user;
  const email = user?.profile?.email;
  if (!user || user.deleted === true || user.is_bot === true || !email) {
    return {
      ok: false,
      reason: 'Slack gives Gatehouse no e-mail for you, so it cannot tell who you are.',
    };
  }
  if (user.is_email_confirmed !== true) {
    return {
      ok: false,
      reason:
        'Your e-mail is not confirmed with Slack, so Gatehouse cannot tell who you are. Decide in the console instead.',
    };
  }
  // Known from a sign-in: their identity and groups then. Someone who never signed in is recorded
  // under Slack's name for them (issuer slack.com, their Slack user id): the decision rules compare
  // `person:<email>` only, so that identity decides nothing, and only a `person:<email>` entry
  // asks them.
  const person = await findPersonByEmail(sql, email);
  const decider: Extract<Decider, { kind: 'person' }> = {
    kind: 'person',
    issuer: person?.issuer ?? 'https://slack.com',
    subject: person?.subject ?? userId,
    name: person?.name ?? user.real_name ?? user.name ?? email,
    email: person?.email ?? email,
    groups: [...(person?.groups ?? [])],
    via: 'slack',
  };
  const roles = await rolesOfGroups(sql, environment.id, roleGroupsOf(decider));
  const approver: readonly string[] = ROLE_ALLOWS.decide;
  if (!roles.some((role) => approver.includes(role))) {
    return {
      ok: false,
      reason: `You (${email}) do not hold the approver role in ${environment.name}, so you cannot decide its approvals.`,
    };
  }
  return { ok: true, decider };
}
