import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { endpointAddressProblem } from '../webhooks/endpoint-address.js';

/** Long enough for any real endpoint; a URL is stored and shown with every app. */
export const MAX_SERVER_URL_LENGTH = 2048;

/** `[::1]` in a URL is `::1` to the resolver. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** A loopback host: plain http is acceptable there (nothing leaves the machine), and only there. */
function isLoopback(url: URL): boolean {
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return net.isIP(host) !== 0 && ipaddr.process(host).range() === 'loopback';
}

/**
 * Why `raw` may not be registered as a remote MCP server's URL, or null when it may.
 * https only, as the MCP authorization spec requires of servers; plain http only on a loopback
 * host and only with `allowPrivate` (MCP_APPS_ALLOW_PRIVATE: development and tests). Loopback,
 * private and link-local addresses are refused unless `allowPrivate`, by the same checks as
 * webhook receivers: the URL is chosen by an API caller, and Gatehouse would otherwise send
 * requests (with users' tokens) into its own network. No credentials or fragment in the URL:
 * the one would be sent to the server with every request and shown with the app, the other is
 * never sent at all.
 */
export async function serverUrlProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.hash || raw.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'http:' && !(allowPrivate && isLoopback(url))) {
    return allowPrivate
      ? 'must be an https URL (plain http is accepted for a loopback host only)'
      : 'must be an https URL';
  }
  const address = await endpointAddressProblem(url.href, allowPrivate);
  if (address === null) return null;
  // A host that does not resolve is said as it is; only a refused address has a setting.
  return address.startsWith('must not')
    ? `${address} (MCP_APPS_ALLOW_PRIVATE=true allows it)`
    : address;
}
