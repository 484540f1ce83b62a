import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { endpointAddressProblem, isPublicAddress } from '../webhooks/endpoint-address.js';
import type { SmtpSecurity } from '../db/notification-channels.js';
import { SLACK_API_BASE_URL } from './kinds.js';

/**
 * Where notifications may go. An SMTP host, a Teams webhook URL and Slack's API address are
 * chosen through the API, and Gatehouse connects to them with secrets (the relay's password, the
 * bot token) and approval links: without these rules a key holder could make Gatehouse connect
 * into its own network (a relay "on" 127.0.0.1:6379 is a Redis spoken to in SMTP). So, as for
 * webhook receivers, only globally routable addresses unless NOTIFY_ALLOW_PRIVATE=true; the
 * senders check again when they connect (`guardedLookup`), since DNS answers change.
 */
const ALLOWS_IT = '(NOTIFY_ALLOW_PRIVATE=true allows it)';

/** `[::1]` in a URL is `::1` to the resolver. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

async function addressesOf(host: string): Promise<string[] | null> {
  if (net.isIP(host)) return [host];
  try {
    return (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return null;
  }
}

/** Loopback or private-network (RFC 1918, unique local): where plain SMTP stays inside. */
function isInside(address: string): boolean {
  const range = ipaddr.process(address).range();
  return range === 'loopback' || range === 'private' || range === 'uniqueLocal';
}

/**
 * Why this relay may not be used, or null. Plain SMTP (`none`) sends the password and the
 * approval links in clear, so it is accepted only for a relay on loopback or the private network,
 * which NOTIFY_ALLOW_PRIVATE must allow in the first place: a relay on the internet must use
 * STARTTLS or TLS.
 */
export async function smtpHostProblem(
  host: string,
  security: SmtpSecurity,
  allowPrivate: boolean,
): Promise<string | null> {
  if (allowPrivate && security !== 'none') return null;
  const addresses = await addressesOf(host);
  if (addresses === null || addresses.length === 0) return `host "${host}" does not resolve`;
  if (security === 'none') {
    if (!allowPrivate) {
      return `security none (plain SMTP) is accepted only for a relay on loopback or the private network ${ALLOWS_IT}; use starttls or tls`;
    }
    return addresses.every(isInside)
      ? null
      : 'security none (plain SMTP) is accepted only for a relay on loopback or the private network: use starttls or tls';
  }
  return addresses.every(isPublicAddress)
    ? null
    : `must not point at a loopback, private or link-local address ${ALLOWS_IT}`;
}

/** A URL chosen by an API caller, without credentials (they would be sent with every post). */
function urlShapeProblem(raw: string, allowPrivate: boolean): string | null {
  if (!URL.canParse(raw)) return 'must be an absolute URL';
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return 'must be an https URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  return null;
}

/** Why this Teams workflow webhook URL may not be posted to, or null. */
export async function teamsWebhookUrlProblem(
  raw: string,
  allowPrivate: boolean,
): Promise<string | null> {
  const shape = urlShapeProblem(raw, allowPrivate);
  if (shape) return shape;
  const address = await endpointAddressProblem(raw, allowPrivate);
  if (address === null) return null;
  return address.startsWith('must not') ? `${address} ${ALLOWS_IT}` : address;
}

/**
 * Why Slack's API may not be reached at this address, or null: it receives the bot token, so it
 * is Slack's own unless NOTIFY_ALLOW_PRIVATE lets a stand-in be named (tests, development).
 */
export function slackApiBaseUrlProblem(raw: string, allowPrivate: boolean): string | null {
  if (raw === SLACK_API_BASE_URL) return null;
  if (!allowPrivate) {
    return `can only be ${SLACK_API_BASE_URL} ${ALLOWS_IT}: the bot token is sent there`;
  }
  const shape = urlShapeProblem(raw, allowPrivate);
  if (shape) return shape;
  const url = new URL(raw);
  if (url.search || url.hash) return 'must not have a query or a fragment';
  return hostOf(url) === '' ? 'must name a host' : null;
}

/** Slack's API address as stored: with its trailing slash, so method names append to it. */
export function normalSlackApiBaseUrl(raw: string): string {
  return raw.endsWith('/') ? raw : `${raw}/`;
}
