import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { CallStack } from '../support/call-stack.js';
import type { TestKey } from '../support/keys.js';
import {
  agentUnderPolicy,
  approvalIdOf,
  linksOf,
  startApprovalStack,
  type ApprovalStack,
} from './approval-stack.js';
import { stopsAfterAll } from '../support/stops.js';

/**
 * The hosted pages count requests whose link is no good (unknown, malformed,
 * expired) per client address, and requests that use a good link per link. So a person whose
 * colleague behind the same address mistyped links is not locked out of a real one. Run with the
 * production limit (RATE_LIMIT_PAGES_PER_MINUTE, 120), not a lower one set for tests.
 */
let approvals: ApprovalStack;
let stack: CallStack;
let agent: TestKey;
let addresses = 0;

/** A client address of its own (TEST-NET-2), as a reverse proxy on loopback reports it. */
function newAddress(): string {
  addresses += 1;
  return `198.51.100.${String(addresses)}`;
}

const started = stopsAfterAll();

beforeAll(async () => {
  approvals = started.add(await startApprovalStack());
  stack = approvals.stack;
  await stack.connect('u_limits');
  agent = await agentUnderPolicy(stack, 'limits', { requested_from: ['alice'], ttl_seconds: 3600 });
});

async function open(url: string, from: string) {
  const response = await fetch(url, {
    headers: { 'x-forwarded-for': from, accept: 'text/html' },
    redirect: 'manual',
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    text: await response.text(),
  };
}

const badToken = () => randomBytes(32).toString('base64url');

async function heldLink(title: string): Promise<string> {
  const approvalId = approvalIdOf(
    await stack.run('acme.create_task', { user: 'u_limits', input: { title } }, { key: agent }),
  );
  const links = await linksOf(approvals, approvalId);
  return links.alice ?? '';
}

async function connectLink(user: string): Promise<string> {
  const link = await stack.request(stack.key, 'POST', '/v1/connect/links', {
    body: { user, app: 'acme' },
  });
  expect(link.status).toBe(201);
  return String(link.body.url);
}

describe('hosted page limits', () => {
  it('serves a valid approval link from an address that sent 125 bad approval-page tokens', async () => {
    const link = await heldLink('after a colleague mistyped links');
    const from = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 125; i += 1) {
      // Mostly well-formed unknown tokens (each costs a lookup), some malformed ones.
      const token = i % 5 === 0 ? `${badToken()}!` : badToken();
      statuses.push((await open(`${stack.api.url}/approvals/review/${token}`, from)).status);
    }
    // Bad tokens are still limited: the 121st in the minute is refused.
    expect(statuses.slice(0, 120).every((status) => status === 404)).toBe(true);
    expect(new Set(statuses.slice(120))).toEqual(new Set([429]));

    const page = await open(link, from);
    expect(page.status).toBe(200);
    expect(page.text).toContain('after a colleague mistyped links');
    // And still the next bad token from there is refused.
    expect((await open(`${stack.api.url}/approvals/review/${badToken()}`, from)).status).toBe(429);
  });

  it('serves a valid connect link from an address that sent 125 bad connect tokens', async () => {
    const link = await connectLink('u_limits_connect');
    const from = newAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 125; i += 1) {
      statuses.push((await open(`${stack.api.url}/connect/${badToken()}`, from)).status);
    }
    expect(new Set(statuses.slice(120))).toEqual(new Set([429]));
    const page = await open(link, from);
    expect(page.status).toBe(200);
    expect(page.text).toContain('/start');
  });

  it('counts the uses of a good link per link: a flood of one link is limited, other links are not', async () => {
    const flooded = await heldLink('opened too often');
    const other = await heldLink('opened once');
    const statuses: number[] = [];
    for (let i = 0; i < 120; i += 1) {
      // From changing addresses: the count is the link's, not an address's.
      statuses.push((await open(flooded, newAddress())).status);
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
    const limited = await open(flooded, newAddress());
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(limited.text).toContain('rate_limited');
    expect((await open(other, newAddress())).status).toBe(200);
  });
});
