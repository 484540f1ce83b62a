import { z } from 'zod';
import { ROLES } from '../../activities/db/role-mappings.js';

/** What the database keeps of a group's name (`role_mappings.group_name`), in characters. */
export const GROUP_NAME_MAX = 200;

/** Characters as Postgres's `length` and JSON Schema count them: code points, not UTF-16 units. */
function characterCount(value: string): number {
  return value.length - (value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

/**
 * One person rather than a group: a person's roles are also looked up under `person:<email>`,
 * the email lower-cased (api/people/role-groups.ts), for providers whose ID tokens carry no groups.
 */
export const PERSON_PREFIX = 'person:';

const personEmail = z.email();

/**
 * A group as the identity provider names it in the ID token's `groups` claim, compared exactly
 * (case and spaces count). Providers name groups freely (Entra by GUID, Okta by names with spaces
 * and slashes), so anything goes but control characters, which no provider's group carries and
 * Postgres cannot always store (NUL). A `person:` name must hold an email, else it could never
 * match anyone.
 */
export const groupName = z
  .string()
  .refine((value) => characterCount(value) >= 1, { message: 'must not be empty' })
  .refine((value) => characterCount(value) <= GROUP_NAME_MAX, {
    message: `must be at most ${String(GROUP_NAME_MAX)} characters long`,
  })
  // A refinement rather than `.regex()`: the OpenAPI generator mangles a `u`-flagged pattern.
  .refine((value) => !/\p{Cc}/u.test(value), { message: 'must not contain control characters' })
  .refine(
    (value) =>
      !value.startsWith(PERSON_PREFIX) ||
      personEmail.safeParse(value.slice(PERSON_PREFIX.length)).success,
    { message: `must be ${PERSON_PREFIX} followed by an email address, for one person` },
  )
  .meta({
    minLength: 1,
    maxLength: GROUP_NAME_MAX,
    description:
      "The group exactly as the identity provider's `groups` claim names it (an Entra group's object id, an Okta group's name), URL-encoded in the path; or `person:<email>` for one person, whatever their groups (the email is compared without case)",
    example: 'Finance Approvers',
  });

/**
 * The name a mapping is kept under: a group's as given; a person's with the email lower-cased,
 * as people are looked up by it (a mapping under `person:Ada@Example.com` would match nobody).
 */
export function mappingName(group: string): string {
  return group.startsWith(PERSON_PREFIX)
    ? `${PERSON_PREFIX}${group.slice(PERSON_PREFIX.length).toLowerCase()}`
    : group;
}

export const roleMappingPath = z.strictObject({ group: groupName });

export const role = z.enum(ROLES).meta({
  description:
    '`approver` decides held calls; `operator` governs policies, apps and connections; `admin` governs and maps groups to roles',
});

/** A group's roles, each once; none: the group holds no role. */
export const roleList = z
  .array(role)
  .refine((roles) => new Set(roles).size === roles.length, {
    message: 'must not name a role twice',
  })
  .meta({ description: 'Each role once; an empty list removes the group', uniqueItems: true });

export const setRoleMappingBody = z.strictObject({ roles: roleList }).meta({
  id: 'set_role_mapping_input',
  description: "Replaces the group's roles in the key's environment.",
  example: { roles: ['approver'] },
});
