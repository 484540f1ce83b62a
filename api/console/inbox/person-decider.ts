import type { ConsoleSession } from '../../../activities/db/console-sessions.js';
import type { Decider } from '../../../workflows/decider-rules.js';

/** A signed-in person as the decision rules know them. */
export function personDecider(
  session: Pick<ConsoleSession, 'issuer' | 'subject' | 'name' | 'email' | 'groups'>,
  via: 'console' | 'link',
): Decider {
  return {
    kind: 'person',
    issuer: session.issuer,
    subject: session.subject,
    name: session.name,
    email: session.email,
    groups: [...session.groups],
    via,
  };
}
