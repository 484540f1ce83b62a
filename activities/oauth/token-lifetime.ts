/**
 * The longest an access token is taken to live, whatever its server says (about 68 years, the
 * bound Go's golang.org/x/oauth2 applies too): longer than any lifetime a server means, so no
 * real token is refreshed early, and far inside what a Date and Postgres can hold, so an answer
 * such as `expires_in: 1e308` is a token that lives long, not a RangeError.
 */
export const MAX_ACCESS_TOKEN_LIFETIME_SECONDS = 2 ** 31 - 1;

/**
 * A token answer's `expires_in` is no lifetime at all (negative, or not a number): the answer is
 * malformed (RFC 6749 §5.1), refused like any other malformed answer. openid-client refuses it
 * for catalog apps; the MCP SDK lets a negative number through, so this refuses it there alike.
 */
export class InvalidTokenLifetime extends Error {
  override name = 'InvalidTokenLifetime';
  constructor(expiresIn: unknown) {
    super(`the token answer's expires_in (${String(expiresIn)}) is no lifetime`);
  }
}

/**
 * When an access token stops working, from a token answer's `expires_in` received at `now`, as
 * every token answer is read (catalog apps and remote MCP servers, code exchange and refresh).
 * Absent or 0 (a token that ends as it is issued cannot be used, and taken literally would make
 * every use a refresh): what the server says of its tokens otherwise, `defaultSeconds`, null for
 * none (no known expiry). Longer than MAX_ACCESS_TOKEN_LIFETIME_SECONDS: that.
 */
export function accessTokenExpiresAt(
  expiresIn: unknown,
  now: Date,
  defaultSeconds: number | null,
): Date | null {
  const lifetime = expiresIn === undefined || expiresIn === 0 ? defaultSeconds : expiresIn;
  if (lifetime === null) return null;
  if (typeof lifetime !== 'number' || Number.isNaN(lifetime) || lifetime < 0) {
    throw new InvalidTokenLifetime(expiresIn);
  }
  return new Date(now.getTime() + Math.min(lifetime, MAX_ACCESS_TOKEN_LIFETIME_SECONDS) * 1000);
}
