import type { ResponseIssuer } from '../db/mcp-authorizations.js';

/** Why an authorization response was refused for its `iss`, for the operator's log. */
export interface ResponseIssuerRefusal {
  /** The issuer the attempt was sent to, as its metadata states it. */
  expected: string;
  /** Every `iss` the response carried, in order (none, or more than one, are refusals too). */
  received: string[];
  reason: string;
}

/**
 * RFC 9207 §2.4, as the MCP authorization specification asks of clients: an authorization
 * response (a code or an error) that names another issuer in `iss` than the authorization server
 * the attempt was sent to came from elsewhere (a mix-up: another server's code, or an attacker's,
 * brought to this attempt), and is refused; so is one without `iss` from a server whose metadata
 * says it always sends it, since that one can only have been stripped. Where the metadata does
 * not say so, a response without `iss` is taken, as servers before RFC 9207 answer, but an `iss`
 * that is there is still checked (the RFC lets a client do so, and a wrong one is never right).
 * Compared as strings, as §2.4 says: no URL normalisation, so a trailing slash the metadata does
 * not have is another issuer. More than one `iss` names no single issuer and is refused.
 */
export function responseIssuerRefusal(
  rule: ResponseIssuer,
  response: URLSearchParams,
): ResponseIssuerRefusal | null {
  const received = response.getAll('iss');
  const expected = rule.issuer;
  if (received.length === 0) {
    if (!rule.required) return null;
    return {
      expected,
      received,
      reason: `the authorization response carries no iss, though the metadata of ${expected} says authorization_response_iss_parameter_supported`,
    };
  }
  if (received.length > 1) {
    return {
      expected,
      received,
      reason: `the authorization response carries iss ${String(received.length)} times (${received.join(', ')}); the issuer expected is ${expected}`,
    };
  }
  if (received[0] === expected) return null;
  return {
    expected,
    received,
    reason: `the authorization response names ${received[0] ?? ''} in iss, not the issuer ${expected} it was sent to`,
  };
}
