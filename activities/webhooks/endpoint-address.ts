import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';

/**
 * Where a webhook may not go unless `WEBHOOK_ALLOW_PRIVATE` is set: a receiver URL is chosen by
 * an API caller, so without this a key holder could make Gatehouse POST into its own network
 * (loopback, private, link-local, cloud metadata at 169.254.169.254, …).
 */
const nonPublic = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are checked against the IPv4 ranges. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  return !nonPublic.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
