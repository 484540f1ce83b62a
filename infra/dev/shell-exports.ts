/**
 * The shell variables the README's examples use, so they reach this stack whatever ports it got:
 * the API, the two keys, and the mail catcher's page (`MAIL_URL`), where the approval e-mails are.
 * The banner prints the line and `gatehouse env` prints the same one for `eval`. Not
 * `TEMPORAL_ADDRESS`: exported into a shell, it would make the next `npm run dev` or `npm test`
 * use this stack's Temporal instead of starting its own.
 */
export function devShellExports(values: {
  apiUrl: string;
  agentKey: string;
  adminKey: string;
  /** Null when the running stack's record predates it (a stack started by an older version). */
  mailUrl: string | null;
}): string {
  const variables: [string, string][] = [
    ['GATEHOUSE_URL', values.apiUrl],
    ['AGENT_KEY', values.agentKey],
    ['ADMIN_KEY', values.adminKey],
    ...(values.mailUrl === null ? [] : [['MAIL_URL', values.mailUrl] satisfies [string, string]]),
  ];
  return `export ${variables.map(([name, value]) => `${name}=${shellWord(value)}`).join(' ')}`;
}

/** Plain URLs and keys stay readable; anything else is single-quoted. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
