import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { CODEC_PATH, CODEC_SESSION_PATH } from '../../api/routes/codec.js';
import { closeServer } from './bind-port.js';

/**
 * What `gatehouse dev` serves as "Temporal UI": the Temporal dev server's own UI,
 * behind a small proxy of ours that also serves the API's codec endpoint at `/codec` on the UI's
 * own origin. The UI sends codec requests with credentials only when "Include cross-origin
 * credentials" is ticked in each browser (the dev server has no flag for it); a request to its
 * own origin carries the codec session cookie without that. So the dev server's codec endpoint
 * is `<this>/codec`, and one sign-in is all a browser needs:
 *
 * - `/codec/sign-in/<token>`: the link the banner prints. It signs the browser in at the API's
 *   codec session form with the dev admin key (the session the form makes: the key sealed in an
 *   HttpOnly cookie, 8 hours) and opens the UI. The token is new at each start and only ever
 *   printed in the terminal, beside the admin key it stands for.
 * - `/api/v1/settings`: the UI's settings, with the message and link its red codec banner shows
 *   when decoding is refused: to the sign-in page, not to Temporal's documentation.
 *
 * Its port is bound when chosen, like the API's, so no other program takes it while the stack
 * starts; it answers 503 until the stack is up.
 */
export interface TemporalUiFront {
  /** Bound by `pickDevPorts` on the announced Temporal UI port. */
  server: Server;
  url(): string;
  /** The one-step sign-in link (a secret: for the terminal only). */
  signInUrl(): string;
  serve(target: FrontTarget): void;
  close(): Promise<void>;
}

export interface FrontTarget {
  /** The Temporal dev server's own UI, on a port of its own. */
  uiUrl: string;
  /** The API, which answers `/codec`. */
  apiUrl: string;
  namespace: string;
  /** The full key the sign-in link signs browsers in with: the dev admin key. */
  signInKey: string;
}

const SIGN_IN_PREFIX = `${CODEC_PATH}/sign-in/`;
const SETTINGS_PATH = '/api/v1/settings';

const digest = (value: string) => createHash('sha256').update(value).digest();

export function createTemporalUiFront(): TemporalUiFront {
  const token = randomBytes(24).toString('base64url');
  let target: FrontTarget | null = null;
  const server = createServer((req, res) => {
    if (!target) {
      plain(res, 503, 'Gatehouse is still starting: reload this page in a few seconds.');
      return;
    }
    route(target, req, res);
  });
  const url = () => `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;

  function route(to: FrontTarget, req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith(SIGN_IN_PREFIX)) {
      void signIn(to, path.slice(SIGN_IN_PREFIX.length), req, res);
    } else if (path === CODEC_PATH || path.startsWith(`${CODEC_PATH}/`)) {
      forward(req, res, to.apiUrl, 'The Gatehouse API');
    } else if (path === SETTINGS_PATH && req.method === 'GET') {
      forwardSettings(req, res, to.uiUrl);
    } else {
      forward(req, res, to.uiUrl, 'The Temporal UI');
    }
  }

  async function signIn(
    to: FrontTarget,
    presented: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    if (req.method !== 'GET' || !timingSafeEqual(digest(presented), digest(token))) {
      // A link of an earlier start, or mistyped: the sign-in page says where the good one is.
      res.writeHead(303, {
        location: CODEC_SESSION_PATH,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      res.end();
      return;
    }
    try {
      // The API's own form makes the session, so it is the session any sign-in makes.
      const answer = await postForm(`${to.apiUrl}${CODEC_SESSION_PATH}`, { key: to.signInKey });
      const cookie = answer.headers['set-cookie']?.[0];
      if (answer.status !== 200 || !cookie) throw new Error(`the API answered ${answer.status}`);
      res.writeHead(303, {
        location: `/namespaces/${encodeURIComponent(to.namespace)}/workflows`,
        'set-cookie': cookie,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      res.end();
    } catch (error) {
      plain(
        res,
        502,
        `Signing in failed (${(error as Error).message}): see .data/logs/gatehouse.log, or sign ` +
          `in with the admin key at ${CODEC_SESSION_PATH}.`,
      );
    }
  }

  function forwardSettings(req: IncomingMessage, res: ServerResponse, uiUrl: string): void {
    const upstream = request(
      `${uiUrl}${req.url ?? SETTINGS_PATH}`,
      { method: 'GET', headers: { ...req.headers, 'accept-encoding': 'identity' } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const rewritten = answer.statusCode === 200 ? withCodecHelp(body, url()) : body;
          const headers = { ...answer.headers, 'content-length': String(rewritten.length) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode ?? 502, headers);
          res.end(rewritten);
        });
      },
    );
    upstream.on('error', (error) => {
      unreachable(res, 'The Temporal UI', error);
    });
    upstream.end();
  }

  return {
    server,
    url,
    signInUrl: () => `${url()}${SIGN_IN_PREFIX}${token}`,
    serve(to) {
      target = to;
    },
    close: () => closeServer(server),
  };
}

/** The UI's settings with its codec banner leading to the sign-in page. */
function withCodecHelp(body: Buffer, frontUrl: string): Buffer {
  try {
    const settings = JSON.parse(body.toString('utf8')) as { Codec?: Record<string, unknown> };
    settings.Codec = {
      ...settings.Codec,
      DefaultErrorMessage:
        'Gatehouse seals payloads. To read them, open the "UI sign-in" link gatehouse dev ' +
        'prints, or sign in with a full API key here:',
      DefaultErrorLink: `${frontUrl}${CODEC_SESSION_PATH}`,
    };
    return Buffer.from(JSON.stringify(settings));
  } catch {
    return body;
  }
}

/** Passes a request through to `to` as it came, Host included, and its answer back. */
function forward(req: IncomingMessage, res: ServerResponse, to: string, what: string): void {
  const upstream = request(
    `${to}${req.url ?? '/'}`,
    { method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on('error', (error) => {
    unreachable(res, what, error);
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

function postForm(
  to: string,
  fields: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const body = new URLSearchParams(fields).toString();
  return new Promise((resolve, reject) => {
    const upstream = request(
      to,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
          // What a browser says of a form posted from the page itself, which this stands for.
          'sec-fetch-site': 'same-origin',
        },
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => {
          resolve({ status: answer.statusCode ?? 0, headers: answer.headers });
        });
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

function unreachable(res: ServerResponse, what: string, error: Error): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  plain(res, 502, `${what} did not answer (${error.message}). Is gatehouse dev still running?`);
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(`${text}\n`);
}
