import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConsoleSession } from '../../../activities/db/console-sessions.js';
import type { PolicyBody } from './candidate.js';

/** What a simulation was run on: the candidate, and the version it was compared with. */
export interface Simulated {
  environmentId: string;
  policyId: string;
  /** The version current when it was simulated; null when the policy did not exist. */
  basedOn: number | null;
  body: PolicyBody;
}

/**
 * The seal a simulation page puts on its "Save this version" form: an HMAC, under the session's
 * own secret, of the candidate as read (its JSON once parsed, so spacing and line breaks do not
 * count) and of the version it was compared with. A save whose candidate or base differs from
 * what was simulated, or that comes from another session, does not match, so what is saved is
 * what the person read the simulation of.
 */
export function simulatedDigest(
  session: Pick<ConsoleSession, 'id' | 'csrfSecret'>,
  simulated: Simulated,
): string {
  return createHmac('sha256', session.csrfSecret)
    .update('console-policy-simulated\0')
    .update(
      JSON.stringify([
        session.id,
        simulated.environmentId,
        simulated.policyId,
        simulated.basedOn,
        simulated.body,
      ]),
    )
    .digest('base64url');
}

export function simulatedDigestMatches(
  session: Pick<ConsoleSession, 'id' | 'csrfSecret'>,
  simulated: Simulated,
  given: string,
): boolean {
  const expected = Buffer.from(simulatedDigest(session, simulated));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
