/**
 * Who a route tells: what a policy's `requested_from` names. `group:<name>` is a group of the
 * identity provider, compared exactly as its `groups` claim names it; `person:<email>` one person,
 * the email compared without case (kept lower-cased, as deciders are compared); `*` every entry
 * an approval asks.
 */
export const EVERYONE_ASKED = '*';
export const GROUP_PREFIX = 'group:';
export const PERSON_PREFIX = 'person:';

/** The `requested_from` stand-in for "any approver", as decision links name it. */
export const ANY_APPROVER_ADDRESSEE = 'role:approver';

/** An audience or `requested_from` entry in the form routes are kept and compared in. */
export function normalAudience(entry: string): string {
  return entry.startsWith(PERSON_PREFIX)
    ? `${PERSON_PREFIX}${entry.slice(PERSON_PREFIX.length).toLowerCase()}`
    : entry;
}

/** The name a role mapping uses (`finance`, `person:ada@example.com`) as a `requested_from` entry. */
export function mappingAsEntry(mappingName: string): string {
  return mappingName.startsWith(PERSON_PREFIX)
    ? normalAudience(mappingName)
    : `${GROUP_PREFIX}${mappingName}`;
}
