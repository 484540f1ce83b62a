/**
 * The names a person's roles are looked up by: their groups, and `person:<email>`. Providers that
 * put no groups in their ID tokens (Google Workspace) can still have people mapped one by one
 * (`gatehouse people roles set person:ada@example.com approver`), and a team can give one person
 * a role without a group of one at the provider.
 */
export function roleGroupsOf(person: { email: string; groups: readonly string[] }): string[] {
  return [...person.groups, `person:${person.email.toLowerCase()}`];
}
