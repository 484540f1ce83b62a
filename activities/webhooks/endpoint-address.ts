import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may go unless `WEBHOOK_ALLOW_PRIVATE` is set: a receiver URL is chosen by an
 * API caller, so without this a key holder could make Gatehouse POST into its own network
 * (loopback, private, link-local, cloud metadata at 169.254.169.254, …). Only globally routable
 * unicast addresses pass, as classified by ipaddr.js (IPv4-mapped IPv6 is judged as the IPv4 it
 * carries), and never an IPv6 form that embeds an IPv4 address a gateway or the host may turn
 * back into it: IPv4-compatible `::a.b.c.d` (ipaddr.js calls it unicast), NAT64 (64:ff9b::/96,
 * 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo (2001::/32).
 */
const EMBEDDING_IPV4 = ['::/96', '64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '2001::/32'].map(
  (cidr) => ipaddr.IPv6.parseCIDR(cidr),
);

export function isPublicAddress(address: string): boolean {
  if (net.isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== 'unicast') return false;
  return !(
    parsed.kind() === 'ipv6' && EMBEDDING_IPV4.some((range) => (parsed as ipaddr.IPv6).match(range))
  );
}

/** `[::1]` in a URL is `::1` to the resolver. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

const REFUSED = 'must not point at a loopback, private or link-local address';

/**
 * Why this URL may not receive webhooks, or null when it may. Resolves the host now; delivery
 * checks again on every connection (see `guardedLookup`), because DNS answers change.
 */
export async function endpointAddressProblem(
  url: string,
  allowPrivate: boolean,
): Promise<string | null> {
  if (allowPrivate) return null;
  const host = hostOf(new URL(url));
  if (net.isIP(host)) return isPublicAddress(host) ? null : REFUSED;
  try {
    const addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
    return addresses.every((a) => isPublicAddress(a.address)) ? null : REFUSED;
  } catch {
    return `host "${host}" does not resolve`;
  }
}

export class NonPublicAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_NON_PUBLIC_ADDRESS';
  constructor(host: string) {
    super(
      `webhook host "${host}" ${net.isIP(host) ? 'is' : 'resolves to'} a loopback, private or link-local address`,
    );
    this.name = 'NonPublicAddressError';
  }
}

/** Refuses an IP-literal host before connecting; the resolver is not asked about those. */
export function assertPublicLiteral(url: URL): void {
  const host = hostOf(url);
  if (net.isIP(host) && !isPublicAddress(host)) throw new NonPublicAddressError(host);
}

/**
 * The resolver a delivery connects through when private addresses are refused: the addresses
 * checked are the ones the socket uses, so a DNS answer that changes between a check and the
 * connection (rebinding) cannot slip through.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '');
      return;
    }
    const [first] = addresses;
    if (!first || !addresses.every((a) => isPublicAddress(a.address))) {
      callback(new NonPublicAddressError(hostname), '');
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
};
