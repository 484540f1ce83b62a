/**
 * Whether two authorization server identifiers name the same server: compared as parsed URLs,
 * tolerating one trailing slash, as the SDK binds stored credentials to their issuer. The slash
 * changes no well-known URL (the SDK strips it before inserting one), so it names no other server.
 */
export function sameIssuer(a: string, b: string): boolean {
  const norm = (value: string) => {
    try {
      return new URL(value).href.replace(/\/$/, '');
    } catch {
      return value.replace(/\/$/, '');
    }
  };
  return norm(a) === norm(b);
}
