import express, {
  Router,
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { z } from 'zod';
import { findCallerByKey, type Caller } from '../../activities/db/api-keys.js';
import { open, seal } from '../../infra/encryption.js';
import {
  PayloadDecryptionError,
  PayloadEncryptionCodec,
} from '../../infra/temporal/payload-codec.js';
import type { ApiDeps } from '../deps.js';
import { refuseOtherEnvironments } from '../codec/payload-environment.js';
import { html, type Html } from '../connect/pages/html.js';
import { renderLayout } from '../connect/pages/layout.js';
import { resolveBranding } from '../connect/pages/theme.js';
import { DEFAULT_BRANDING } from '../connect/pages/types.js';
import { sendPage } from '../connect/respond.js';
import {
  ApiError,
  InsufficientAccessError,
  InvalidApiKeyError,
  InvalidRequestError,
} from '../errors.js';
import { callerOf } from '../http/authorize.js';

/**
 * The Temporal Web UI's remote codec: the UI posts a workflow's encrypted payloads to
 * `<endpoint>/decode` as protobuf JSON (`{payloads: [{metadata, data}]}`, bytes in base64) and
 * shows what comes back; `/encode` seals what an operator types into the UI. `temporal` CLI
 * commands speak the same protocol (`--codec-endpoint`, `--codec-auth`).
 *
 * Only a full key may decode: the payloads are every user's inputs and every app's answers, and
 * only those of the key's own environment (payload-environment.ts). The key arrives as
 * `Authorization: Bearer` (the CLI's `--codec-auth`) or `X-API-Key`, or from a codec session: the
 * UI forwards only its own OIDC token, never a Gatehouse key, but it can send cookies ("Include
 * cross-origin credentials"), so an operator signs in at `/codec/session` once. Wrong keys count
 * against the client's address like wrong keys at `/v1` (`limited`: api/http/rate-limit.ts).
 */
export const CODEC_PATH = '/codec';
export const CODEC_SESSION_PATH = `${CODEC_PATH}/session`;
const SESSION_PATH = CODEC_SESSION_PATH;
const SESSION_COOKIE = 'gatehouse_codec';
const SESSION_SECONDS = 8 * 3600;
/** Associated data of the sealed session, so no other sealed value passes for one. */
const SESSION_PURPOSE = 'codec-session';
const MIB = 1024 * 1024;
/** Same-origin form posts then carry their real Origin (under no-referrer they say "null"). */
const REFERRER = 'strict-origin';

const jsonPayload = z.looseObject({
  metadata: z.record(z.string(), z.string()).nullish(),
  data: z.string().nullish(),
});
type JsonPayload = z.infer<typeof jsonPayload>;
const payloadsBody = z.object({ payloads: z.array(jsonPayload).max(10_000) });

const sessionContent = z.object({ key: z.string(), expiresAt: z.number() });

function toPayload(json: JsonPayload) {
  return {
    metadata: Object.fromEntries(
      Object.entries(json.metadata ?? {}).map(([name, value]) => [
        name,
        new Uint8Array(Buffer.from(value, 'base64')),
      ]),
    ),
    data: new Uint8Array(Buffer.from(json.data ?? '', 'base64')),
  };
}

function toJson(payload: {
  metadata?: Record<string, Uint8Array> | null;
  data?: Uint8Array | null;
}): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([name, value]) => [
        name,
        Buffer.from(value).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

function headerKey(req: Request): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '')?.[1];
  return bearer ?? req.get('x-api-key')?.trim();
}

export function codecRoutes(
  deps: ApiDeps,
  limited: (check: RequestHandler) => RequestHandler,
): Router {
  const router = Router();
  const { config, sql } = deps;
  const uiOrigin = config.temporal.uiOrigin;
  const codec = new PayloadEncryptionCodec(config.encryption);
  const publicUrl = new URL(config.api.publicUrl);
  const secureCookie = publicUrl.protocol === 'https:';
  // A payload is at most about two bodies (BODY_LIMIT_BYTES) once sealed, and base64 in JSON.
  const bodyLimit = 4 * config.api.bodyLimitBytes + MIB;
  const devSignInLink = config.temporal.devSignInLink;
  /** Whether a request came to the UI's own origin: `gatehouse dev` serves /codec there too. */
  const atUiOrigin = (req: Request) =>
    uiOrigin !== null && `${req.protocol}://${req.get('host') ?? ''}` === uiOrigin;
  const page = (req: Request, options: Pick<SessionPageOptions, 'state' | 'problem'>) =>
    sessionPage({
      ...options,
      endpoint: `${config.api.publicUrl}${CODEC_PATH}`,
      // With gatehouse dev the UI's codec is on its own origin: nothing to configure there.
      uiReads: atUiOrigin(req) || (devSignInLink && uiOrigin !== null) ? uiOrigin : null,
      devSignInLink,
    });
  /** Where a refused request leads: the sign-in page, at the address it came to. */
  const signInAt = (req: Request) =>
    `${atUiOrigin(req) && uiOrigin ? uiOrigin : config.api.publicUrl}${SESSION_PATH}`;
  /** And with `gatehouse dev`, the one step its banner offers. */
  const devHint = devSignInLink
    ? ' With gatehouse dev, the "UI sign-in" link its banner prints does that in one step.'
    : '';

  function sessionCookie(value: string, maxAge: number): string {
    const attributes = [
      `${SESSION_COOKIE}=${value}`,
      `Path=${CODEC_PATH}`,
      `Max-Age=${String(maxAge)}`,
      'HttpOnly',
      // The UI and the API share a host name (ports differ), so Strict still reaches /decode.
      'SameSite=Strict',
    ];
    if (secureCookie) attributes.push('Secure');
    return attributes.join('; ');
  }

  /** The key of a live codec session, or null; a session only ever carries a sealed key. */
  function sessionKey(req: Request): string | null {
    const value = cookieValue(req, SESSION_COOKIE);
    if (!value) return null;
    try {
      const content = sessionContent.parse(
        JSON.parse(open(config.encryption, value, SESSION_PURPOSE)),
      );
      return content.expiresAt > Date.now() ? content.key : null;
    } catch {
      return null;
    }
  }

  async function codecCaller(req: Request): Promise<Caller> {
    const presented = headerKey(req);
    // The UI may forward its own OIDC token as a Bearer: only a Gatehouse key is taken from a
    // header, and a session cookie then still counts.
    const key = presented?.startsWith('gk_') ? presented : sessionKey(req);
    const caller = key ? await findCallerByKey(sql, key) : null;
    if (!caller) {
      throw new InvalidApiKeyError(
        presented !== undefined || cookieValue(req, SESSION_COOKIE) !== undefined
          ? 'The API key is wrong or revoked, or the codec session has ended: sign in again at ' +
              `${signInAt(req)}.${devHint}`
          : 'Decoding workflow payloads needs a full API key: send "Authorization: Bearer <key>", ' +
              `or, for the Temporal UI, sign in at ${signInAt(req)}.${devHint}`,
      );
    }
    if (caller.access !== 'full') {
      throw new InsufficientAccessError(
        'Workflow payloads hold every call’s input and answer: reading them needs a key with ' +
          `full access: send one, or sign in with one at ${signInAt(req)}.${devHint}`,
        { required_access: 'full' },
      );
    }
    return caller;
  }

  /**
   * The UI is another origin (its own port, or host). It alone is let in, with credentials: the
   * origin TEMPORAL_UI_URL names, exactly. Any other program on the API's host (another port)
   * must not read payloads with an operator's session cookie, which SameSite cannot keep from it.
   */
  router.use(CODEC_PATH, (req, res, next) => {
    const origin = req.get('origin');
    res.vary('Origin');
    const allowed = origin !== undefined && origin === uiOrigin;
    if (allowed) {
      res.set({
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Credentials': 'true',
      });
    }
    if (req.method !== 'OPTIONS') {
      next();
      return;
    }
    if (allowed) {
      res.set({
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers':
          'authorization, authorization-extras, content-type, x-api-key, x-namespace',
        'Access-Control-Max-Age': '600',
      });
    }
    res.status(204).end();
  });

  /** The key is checked before the body is read: a stranger never makes us parse megabytes. */
  const authorizeThenParse = [
    limited(async (req, res, next) => {
      res.locals.caller = await codecCaller(req);
      next();
    }),
    express.json({ limit: bodyLimit }),
  ];

  async function convert(req: Request, res: Response, direction: 'decode' | 'encode') {
    const caller = callerOf(res);
    const parsed = payloadsBody.safeParse(req.body);
    if (!parsed.success) {
      throw new InvalidRequestError(
        'The body must be protobuf JSON Payloads: {"payloads": [{"metadata": {…}, "data": "<base64>"}]}.',
        parsed.error.issues.map((issue) => ({
          path: issue.path.join('.'),
          message: issue.message,
        })),
      );
    }
    const { payloads } = parsed.data;
    const inputs = payloads.map(toPayload);
    if (direction === 'decode') {
      await refuseOtherEnvironments(sql, caller, inputs, req.log, {
        signInAt: signInAt(req),
        devHint,
      });
    }
    let converted;
    try {
      converted = direction === 'decode' ? await codec.decode(inputs) : await codec.encode(inputs);
    } catch (error) {
      if (error instanceof PayloadDecryptionError) {
        throw new InvalidRequestError(`A payload could not be decoded: ${error.message}.`);
      }
      throw error;
    }
    // Who read how much is worth keeping; what they read never reaches a log.
    req.log.info(
      { keyId: caller.keyId, environment: caller.environmentName, payloads: payloads.length },
      direction === 'decode' ? 'workflow payloads decoded' : 'workflow payloads encoded',
    );
    res.set('Cache-Control', 'no-store').json({
      // The codec hands back the very object it left alone: such a payload returns exactly as
      // it came, unknown fields included.
      payloads: converted.map((payload, i) =>
        payload === inputs[i] ? payloads[i] : toJson(payload),
      ),
    });
  }

  router.post(`${CODEC_PATH}/decode`, ...authorizeThenParse, async (req, res) => {
    await convert(req, res, 'decode');
  });
  router.post(`${CODEC_PATH}/encode`, ...authorizeThenParse, async (req, res) => {
    await convert(req, res, 'encode');
  });

  router.get(SESSION_PATH, (req, res) => {
    sendPage(res, 200, page(req, { state: sessionKey(req) ? 'signed-in' : 'sign-in' }), REFERRER);
  });

  const formOf = (req: Request) =>
    (req.is('application/x-www-form-urlencoded') ? req.body : {}) as Record<string, unknown>;
  const formKey = (req: Request) => {
    const key = formOf(req).key;
    return typeof key === 'string' ? key.trim() : '';
  };

  router.post(
    SESSION_PATH,
    express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 5 }),
    (req, res, next) => {
      // A form posted from another site is refused: nobody signs an operator in or out for them.
      const site = req.get('sec-fetch-site');
      if (site !== undefined && site !== 'same-origin' && site !== 'none') {
        sendPage(res, 403, page(req, { state: 'sign-in', problem: 'cross-site' }), REFERRER);
        return;
      }
      if (formOf(req).action === 'sign-out') {
        res.set('Set-Cookie', sessionCookie('', 0));
        sendPage(res, 200, page(req, { state: 'signed-out' }), REFERRER);
        return;
      }
      next();
    },
    // A wrong key here is a wrong key at /v1: counted per address, 429 past the limit.
    limited(async (req, res, next) => {
      const key = formKey(req);
      const caller = key.startsWith('gk_') ? await findCallerByKey(sql, key) : null;
      if (!caller) throw new InvalidApiKeyError();
      res.locals.caller = caller;
      next();
    }),
    (req, res) => {
      const caller = callerOf(res);
      const key = formKey(req);
      if (caller.access !== 'full') {
        sendPage(res, 403, page(req, { state: 'sign-in', problem: 'not-full' }), REFERRER);
        return;
      }
      const expiresAt = Date.now() + SESSION_SECONDS * 1000;
      const sealed = seal(config.encryption, JSON.stringify({ key, expiresAt }), SESSION_PURPOSE);
      req.log.info(
        { keyId: caller.keyId, environment: caller.environmentName },
        'codec session started',
      );
      res.set('Set-Cookie', sessionCookie(sealed, SESSION_SECONDS));
      sendPage(res, 200, page(req, { state: 'signed-in' }), REFERRER);
    },
  );

  /** The sign-in form is a page: its refusals are pages too. */
  const sessionRefused: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (!(err instanceof ApiError)) {
      next(err);
    } else if (err.code === 'invalid_api_key') {
      sendPage(res, 401, page(req, { state: 'sign-in', problem: 'unknown-key' }), REFERRER);
    } else if (err.code === 'rate_limited') {
      res.set(err.headers);
      sendPage(res, 429, page(req, { state: 'sign-in', problem: 'rate-limited' }), REFERRER);
    } else {
      next(err);
    }
  };
  router.use(SESSION_PATH, sessionRefused);

  const tooLarge: ErrorRequestHandler = (err: unknown, _req, _res, next) => {
    const type = (err as { type?: unknown } | null)?.type;
    next(
      type === 'entity.too.large'
        ? new ApiError(
            'payload_too_large',
            `The request body exceeds ${String(bodyLimit)} bytes.`,
            {
              limit_bytes: bodyLimit,
            },
          )
        : err,
    );
  };
  router.use(CODEC_PATH, tooLarge);
  return router;
}

const PROBLEMS = {
  'unknown-key': 'That key is not a live Gatehouse API key.',
  'not-full': 'That key does not have full access. Reading workflow payloads needs a full key.',
  'cross-site': 'This form was posted from another site, so it was refused.',
  'rate-limited': 'Too many sign-in attempts in the last minute. Wait a minute, then try again.',
} as const;

const SESSION_CSS = `
label{display:block;margin-top:20px;font-weight:600}
input[type=password]{box-sizing:border-box;width:100%;margin-top:8px;padding:10px 12px;border:1px solid var(--border);border-radius:var(--radius);background:transparent;color:inherit;font:inherit}
button.button{width:100%;border:0;cursor:pointer;font:inherit;text-align:center}
.problem{margin-top:16px;color:var(--danger)}
p+p{margin-top:12px}
.button.secondary{background:transparent;color:inherit;border:1px solid var(--border)}
`;

interface SessionPageOptions {
  state: 'sign-in' | 'signed-in' | 'signed-out';
  problem?: keyof typeof PROBLEMS;
  /** What the UI's codec setting must say when it reads payloads from the API's own origin. */
  endpoint: string;
  /** The UI's origin when it already reads payloads through a codec endpoint of its own origin
   * (`gatehouse dev`'s, or a reverse proxy's): nothing to configure then, only to reload. */
  uiReads: string | null;
  /** Whether `gatehouse dev`'s banner offers a one-step sign-in link. */
  devSignInLink: boolean;
}

/** The sign-in page for the Temporal UI's codec; no scripts, the connect pages' strict CSP. */
function sessionPage(options: SessionPageOptions): string {
  const { state, problem, endpoint, uiReads, devSignInLink } = options;
  let card: Html;
  if (state === 'signed-in') {
    const next = uiReads
      ? html`<p>
            The Temporal UI reads payloads through its own address, so there is nothing to set up
            there: reload its page, or open it.
          </p>
          <p><a class="button" href="${uiReads}">Open the Temporal UI</a></p>`
      : html`<p>
          In the UI, open “Configure Codec Server”, choose “Use my browser setting”, enter
          <code>${endpoint}</code> and tick “Include cross-origin credentials”.
        </p>`;
    card = html`<h1>Temporal UI can decode</h1>
      <p>
        For the next 8 hours, this browser may read call inputs and app answers in the Temporal UI.
      </p>
      ${next}
      <form method="post">
        <input type="hidden" name="action" value="sign-out" />
        <button class="button secondary" type="submit">End the session</button>
      </form>`;
  } else {
    card = html`<h1>${state === 'signed-out' ? 'Session ended' : 'Read payloads in Temporal'}</h1>
      <p>
        Workflow payloads are encrypted. Sign in with a full API key so that the Temporal UI, in
        this browser, can show them decoded.
      </p>
      ${
        devSignInLink &&
        html`<p class="hint">
          With <code>gatehouse dev</code>, one step does it: open the “UI sign-in” link its banner
          prints (each start prints a new one). Or paste its admin key here.
        </p>`
      }
      ${problem && html`<p class="problem">${PROBLEMS[problem]}</p>`}
      <form method="post">
        <label for="key">Full API key</label>
        <input id="key" name="key" type="password" autocomplete="off" required />
        <button class="button" type="submit">Sign in</button>
      </form>`;
  }
  return renderLayout({
    branding: resolveBranding(DEFAULT_BRANDING),
    title: 'Gatehouse codec',
    card,
    extraCss: SESSION_CSS,
    referrer: REFERRER,
  });
}
