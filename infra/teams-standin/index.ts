import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { checkTeamsMessage, type CheckedCard } from './card-validation.js';

export {
  adaptiveCardProblems,
  checkTeamsMessage,
  TEAMS_MAX_CARD_VERSION,
  TEAMS_MESSAGE_MAX_BYTES,
  type CheckedCard,
  type CheckedMessage,
} from './card-validation.js';

/**
 * A local stand-in for a Teams "workflow" incoming webhook (the Workflows app's "when a Teams
 * webhook request is received" trigger, which replaced Office 365 connectors), built from
 * Microsoft's published documentation because no Teams tenant is reachable from the machines
 * Gatehouse is built on. See README.md here.
 */

/**
 * Faults, each for the next `times` deliveries (1 by default):
 * - `rate_limited`: 429 with `Retry-After` (seconds), as Microsoft documents for webhooks posting
 *   faster than Teams takes them.
 * - `server_error`: a 5xx, as when the workflow service fails.
 * - `hold`: answered (202) only once the test calls `release()`.
 */
export const teamsFaultSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('rate_limited'),
    retryAfterSeconds: z.number().int().min(0).max(3600).default(1),
    times: z.number().int().min(1).default(1),
  }),
  z.object({
    kind: z.literal('server_error'),
    status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).default(502),
    times: z.number().int().min(1).default(1),
  }),
  z.object({ kind: z.literal('hold'), times: z.number().int().min(1).default(1) }),
]);
export type TeamsFault = z.input<typeof teamsFaultSchema>;

export interface TeamsFaultHandle {
  /** Resolves when a delivery first met the fault. */
  readonly met: Promise<void>;
  /** Lets held deliveries be answered, and withdraws what is left of the fault. */
  release(): void;
}

/** One POST to the webhook and what the stand-in made of it. */
export interface TeamsDelivery {
  status: number;
  contentType: string | null;
  /** The body as JSON, or null when it was not JSON. */
  body: unknown;
  bytes: number;
  /** Problems of the message itself (not JSON, its shape, its size). */
  problems: string[];
  /** Each card with its problems, as Teams would read it. */
  cards: CheckedCard[];
  fault: TeamsFault['kind'] | null;
}

export interface TeamsStandin {
  /** The webhook URL, with its `sig` query parameter, as a workflow's trigger gives it. */
  url: string;
  deliveries(): TeamsDelivery[];
  /** Resolves once `count` deliveries have been answered, with them. */
  received(count?: number): Promise<TeamsDelivery[]>;
  inject(fault: TeamsFault): TeamsFaultHandle;
  close(): Promise<void>;
}

interface Armed {
  fault: z.output<typeof teamsFaultSchema>;
  left: number;
  meet: () => void;
  released: Promise<void>;
  release: () => void;
}

const BODY_LIMIT_BYTES = 1024 * 1024;

export async function startTeamsStandin(): Promise<TeamsStandin> {
  const workflowId = randomBytes(16).toString('hex');
  const signature = randomBytes(24).toString('base64url');
  const path = `/workflows/${workflowId}/triggers/manual/paths/invoke`;
  const recorded: TeamsDelivery[] = [];
  const waiters: { count: number; resolve: (deliveries: TeamsDelivery[]) => void }[] = [];
  const armed: Armed[] = [];
  const injected: Armed[] = [];

  const record = (delivery: TeamsDelivery): void => {
    recorded.push(delivery);
    for (const waiter of [...waiters]) {
      if (recorded.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(structuredClone(recorded));
      }
    }
  };

  const takeFault = (): Armed | undefined => {
    const found = armed.find((a) => a.left > 0);
    if (!found) return undefined;
    found.left -= 1;
    if (found.left === 0) armed.splice(armed.indexOf(found), 1);
    found.meet();
    return found;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin.invalid');
    const raw = await readBody(req);
    if (url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('POST only');
      return;
    }
    // The workflow URL's `sig` is its only credential: without it, or with another, no run.
    if (url.searchParams.get('sig') !== signature) {
      send(res, 401, { error: { code: 'Unauthorized', message: 'the sig parameter is wrong' } });
      return;
    }
    const contentType = req.headers['content-type'] ?? null;
    const body = jsonOf(raw);
    const read: { problems: string[]; cards: CheckedCard[] } =
      body === undefined
        ? { problems: ['the body is not JSON'], cards: [] }
        : checkTeamsMessage(body, raw.length);
    const base = { contentType, body: body ?? null, bytes: raw.length, ...read };

    const fault = takeFault();
    if (fault?.fault.kind === 'rate_limited') {
      const retryAfter = String(fault.fault.retryAfterSeconds);
      send(res, 429, { error: { code: 'TooManyRequests', message: 'rate limited' } }, retryAfter);
      record({ ...base, status: 429, fault: 'rate_limited' });
      return;
    }
    if (fault?.fault.kind === 'server_error') {
      const { status } = fault.fault;
      send(res, status, { error: { code: 'ServiceUnavailable', message: 'try again later' } });
      record({ ...base, status, fault: 'server_error' });
      return;
    }
    if (fault?.fault.kind === 'hold') await fault.released;
    // A workflow answers 202 Accepted as soon as its trigger has the request, before the flow
    // posts the card: a card Teams cannot show fails later, out of the sender's sight. So the
    // stand-in answers 202 whatever the card, and records what Teams would have made of it.
    res.writeHead(202).end();
    record({ ...base, status: 202, fault: fault ? fault.fault.kind : null });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('teams stand-in: request failed', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('teams stand-in failed');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const query = new URLSearchParams({
    'api-version': '1',
    sp: '/triggers/manual/run',
    sv: '1.0',
    sig: signature,
  });

  return {
    url: `http://127.0.0.1:${String(port)}${path}?${query.toString()}`,
    deliveries: () => structuredClone(recorded),
    received: (count = 1) => {
      if (recorded.length >= count) return Promise.resolve(structuredClone(recorded));
      return new Promise((resolve) => {
        waiters.push({ count, resolve });
      });
    },
    inject: (input) => {
      const fault = teamsFaultSchema.parse(input);
      let meet = (): void => undefined;
      const met = new Promise<void>((resolve) => {
        meet = resolve;
      });
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const entry: Armed = { fault, left: fault.times, meet, released, release };
      armed.push(entry);
      injected.push(entry);
      return {
        met,
        release: () => {
          entry.left = 0;
          if (armed.includes(entry)) armed.splice(armed.indexOf(entry), 1);
          entry.release();
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const entry of injected) entry.release();
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown, retryAfter?: string): void {
  res
    .writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
    })
    .end(JSON.stringify(body));
}

/** The body as JSON, or undefined when it is not JSON. */
function jsonOf(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        reject(new Error(`teams stand-in: a body over ${String(BODY_LIMIT_BYTES)} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}
