import type { ConsoleSession } from '../../activities/db/console-sessions.js';
import { ANY_APPROVER, LEGACY_ANY_APPROVER, type Decider } from '../../workflows/decider-rules.js';

/** A signed-in person as the decision rules know them. */
export function personDecider(
  session: Pick<ConsoleSession, 'issuer' | 'subject' | 'name' | 'email' | 'groups'>,
  via: 'console' | 'link' | 'slack',
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

/**
 * Whether a decision link was sent to this signed-in person: `person:<email>` to them alone,
 * `group:<name>` to its members, the one link of an approval that named nobody to anyone who
 * approves here. `unrelated`: addressed to a key's agent (a machine's inbox), which says
 * nothing about who this person is.
 */
export function linkAddressedTo(
  addressee: string,
  person: { email: string; groups: readonly string[]; approves: boolean },
): 'yes' | 'no' | 'unrelated' {
  if (addressee.startsWith('person:')) {
    return addressee.slice('person:'.length).toLowerCase() === person.email.toLowerCase()
      ? 'yes'
      : 'no';
  }
  if (addressee.startsWith('group:')) {
    return person.groups.includes(addressee.slice('group:'.length)) ? 'yes' : 'no';
  }
  if (addressee === ANY_APPROVER || addressee === LEGACY_ANY_APPROVER) {
    return person.approves ? 'yes' : 'no';
  }
  return 'unrelated';
}
