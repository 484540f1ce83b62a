import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../infra/config.js';
import { deadlineSignal, type DeadlineSignal } from '../../infra/deadline-signal.js';
import { MAX_ANSWER_DEPTH, textNestsDeeperThan } from '../../infra/json-nesting.js';
import type { Sql } from '../../infra/database/client.js';
import {
  UPSTREAM_TIMEOUT,
  UPSTREAM_UNREACHABLE,
  type CallTargetInput,
  type OutboundRequest,
  type UpstreamBody,
  type UpstreamFailureDetails,
  type UpstreamOutcome,
} from '../../workflows/call-types.js';
import {
  findAction,
  findApp,
  type AppDefinition,
  type CallScope,
} from '../../workflows/catalog/index.js';
import { outboundRequest } from '../../workflows/outbound-request.js';
import { validAccessToken } from '../connections/access-token.js';
import { markConnectionUsed } from '../db/connections.js';
import { recordScopeStepUp } from '../mcp-auth/step-up.js';
import { toolAttempt } from './mcp-tool-attempt.js';
import { findMcpToolTarget } from './mcp-tool-target.js';
import { mcpToolUpstream } from './mcp-tool-upstream.js';
import { observedUpstream } from './upstream-telemetry.js';
import { appEndpoints } from '../oauth/endpoints.js';
import { operationOutcome } from '../openapi-registry/operation-call.js';
import { proxyOutcome } from '../openapi-registry/proxy-call.js';
import { requestCredential } from '../openapi-registry/operation-credential.js';

export interface UpstreamCall {
  /** null only for a remote MCP server that asks for no authorization. */
  connectionId: string | null;
  /** The action or proxy call; the request is built here, from the catalog. */
  target: CallTargetInput;
  /** Where an app outside the catalog is registered; absent from calls older than such apps. */
  environmentId?: string;
}

export interface UpstreamDeps {
  sql: Sql;
  config: Config;
  temporal: Client;
}

/** Well inside the write activity's heartbeat timeout (workflows/call.ts). */
const HEARTBEAT_EVERY_MS = 1_000;

/** How often a write is tried while its request provably never left. */
const WRITE_ATTEMPTS = 3;

/** Errors that prove the request never left this machine, so a retry cannot repeat a write. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

class TooLarge extends Error {}

/**
 * What a failed fetch means for the call: a timeout, or an app that could not be
 * reached, become upstream_* answers; anything else is our fault and not the app's. The
 * failure's details say whether the request may have reached the app (`UpstreamFailureDetails`),
 * so a write's answer can say it may have happened.
 */
function upstreamFailure(error: unknown, scope: CallScope, timeoutMs: number): ApplicationFailure {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return ApplicationFailure.create({
      type: UPSTREAM_TIMEOUT,
      message: `the app did not answer within ${String(timeoutMs)} ms`,
      // UPSTREAM_TIMEOUT_MS is the caller's whole wait, not one of several tries, and
      // a write may have happened: a timeout is never tried again.
      nonRetryable: true,
      details: [{ sent: true } satisfies UpstreamFailureDetails],
    });
  }
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const code = causeCode(error);
    return ApplicationFailure.create({
      type: UPSTREAM_UNREACHABLE,
      message: `the app could not be reached (${code ?? 'network error'})`,
      // Writes retry inside their single attempt, and only while nothing left.
      nonRetryable: scope !== 'read',
      details: [{ sent: !NOT_SENT.has(code ?? '') } satisfies UpstreamFailureDetails],
    });
  }
  return ApplicationFailure.nonRetryable(
    `the request to the app failed: ${error instanceof Error ? error.message : 'unknown error'}`,
    'UpstreamRequestFailed',
  );
}

/** The app's answer failed after its headers arrived: a timeout or a dropped connection. */
function answerCutOff(error: unknown, scope: CallScope, timeoutMs: number): ApplicationFailure {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return upstreamFailure(error, scope, timeoutMs);
  }
  return ApplicationFailure.create({
    type: UPSTREAM_UNREACHABLE,
    message: `the app's answer was cut off (${error instanceof Error ? error.message : 'unknown'})`,
    nonRetryable: scope !== 'read',
    details: [{ sent: true } satisfies UpstreamFailureDetails],
  });
}

/** Reads at most `limit` bytes: a larger body never enters a Temporal payload, which is capped. */
async function readCapped(response: Response, limit: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new TooLarge();
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

function parsedBody(bytes: Buffer): UpstreamBody {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return { kind: 'parsed', value: null };
  // Deeper JSON is kept as text, as non-JSON answers are: turning it into a Temporal payload
  // would overflow the stack after the app has already acted, and a served call must never fail
  // for our bookkeeping.
  if (textNestsDeeperThan(text, MAX_ANSWER_DEPTH)) return { kind: 'parsed', value: text };
  try {
    return { kind: 'parsed', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'parsed', value: text };
  }
}

/** A 2xx answer to an action, shaped by the action (its `result`), as the caller gets it. */
function actionResult(
  target: CallTargetInput,
  status: number,
  headers: Record<string, string>,
  body: UpstreamBody,
): UpstreamBody {
  const action = target.kind === 'action' ? findAction(target.action) : undefined;
  if (!action?.result || status < 200 || status >= 300 || body.kind !== 'parsed') return body;
  try {
    return { kind: 'parsed', value: action.result({ status, headers, body: body.value }) };
  } catch {
    // An answer shaped otherwise than the catalog expects is still the app's answer: given whole.
    return body;
  }
}

/** The app's answer as the workflow gets it: read (capped), then parsed and shaped for actions. */
async function outcomeOf(
  response: Response,
  how: {
    app: AppDefinition;
    target: CallTargetInput;
    raw: boolean;
    limitBytes: number;
    timeoutMs: number;
  },
): Promise<UpstreamOutcome> {
  const { status } = response;
  const headers = Object.fromEntries(response.headers);
  let bytes: Buffer;
  try {
    bytes = await readCapped(response, how.limitBytes);
  } catch (error) {
    if (error instanceof TooLarge) return { kind: 'too_large', status, limitBytes: how.limitBytes };
    // The app has the request: a cut-off answer is the app's failure, never ours to retry.
    throw answerCutOff(error, how.target.scope, how.timeoutMs);
  }
  if (how.raw) {
    return {
      kind: 'response',
      status,
      headers,
      body: { kind: 'raw', base64: bytes.toString('base64') },
    };
  }
  const parsed = parsedBody(bytes);
  const ok = status >= 200 && status < 300;
  if (ok && parsed.kind === 'parsed' && how.app.reportsFailure?.(parsed.value)) {
    return { kind: 'response', status, headers, body: parsed, reportsFailure: true };
  }
  return {
    kind: 'response',
    status,
    headers,
    body: actionResult(how.target, status, headers, parsed),
  };
}

function requestBody(request: OutboundRequest): { body?: string | Buffer; type?: string } {
  if (request.body === null) return {};
  if (request.body.kind === 'json') {
    return { body: JSON.stringify(request.body.value), type: 'application/json' };
  }
  return { body: Buffer.from(request.body.base64, 'base64') };
}

/**
 * One request to the app with the user's credentials: a valid token from the connections
 * helper, and on a 401 one forced refresh and one retry. A timeout after the
 * request left is final for writes (it may have happened) and retried by Temporal for reads.
 */
export function callUpstreamActivity(deps: UpstreamDeps) {
  const { sql, config } = deps;
  return async (call: UpstreamCall): Promise<UpstreamOutcome> => {
    const { target } = call;
    const context = Context.current();
    const app = findApp(target.app);
    const { connectionId } = call;
    if (!app) {
      // An app outside the catalog: an OpenAPI app's operation or proxy, else a remote MCP tool.
      const openApiDeps = {
        sql,
        timeoutMs: config.upstream.timeoutMs,
        limitBytes: config.api.bodyLimitBytes,
        allowPrivate: config.mcpApps.allowPrivate,
        ...(connectionId === null
          ? {}
          : {
              credential: (kind: 'credential' | 'oauth2') =>
                requestCredential(deps, connectionId, kind),
            }),
      };
      if (target.kind === 'proxy' && call.environmentId !== undefined) {
        const proxied = await proxyOutcome(
          openApiDeps,
          { ...target, environmentId: call.environmentId },
          context,
        );
        if (proxied) return proxied;
      }
      const imported =
        target.kind === 'action' && call.environmentId !== undefined
          ? await operationOutcome(
              openApiDeps,
              {
                environmentId: call.environmentId,
                app: target.app,
                action: target.action,
                scope: target.scope,
                input: target.input,
              },
              context,
            )
          : null;
      return imported ?? remoteToolOutcome(deps, call, context);
    }
    if (connectionId === null) return { kind: 'connection', status: 'missing' };
    const request = outboundRequest(target);
    const url = `${appEndpoints(app, config.apps.urls).apiBaseUrl}${request.pathAndQuery}`;
    const { body, type } = requestBody(request);
    const scope = target.scope;

    /** Whether the request may have reached the app on the current attempt. */
    const attempt = { mayHaveSent: false };
    // One wait for the whole attempt, the retry after a 401 and the reading of the answer
    // included: the caller was promised UPSTREAM_TIMEOUT_MS, not that many per request.
    const timeoutMs = config.upstream.timeoutMs;
    const send = async (accessToken: string, deadline: DeadlineSignal): Promise<Response> => {
      const headers = new Headers({ ...app.apiHeaders, ...request.headers });
      if (type && !headers.has('content-type')) headers.set('content-type', type);
      headers.set('authorization', `Bearer ${accessToken}`);
      attempt.mayHaveSent = true;
      return observedUpstream(target.app, request.method, async () => {
        try {
          return await fetch(url, {
            method: request.method,
            headers,
            ...(body === undefined ? {} : { body }),
            redirect: 'manual',
            signal: deadline.signal,
          });
        } catch (error) {
          const failure = upstreamFailure(error, scope, timeoutMs);
          if (failure.type === UPSTREAM_UNREACHABLE && NOT_SENT.has(causeCode(error) ?? '')) {
            attempt.mayHaveSent = false;
          }
          throw failure;
        }
      });
    };

    /** The connection's last use is recent enough that recording this one changes nothing. */
    let usedRecently = false;
    const exchange = async (deadline: DeadlineSignal): Promise<Response | UpstreamOutcome> => {
      let token = await validAccessToken(deps, connectionId);
      if (!token.ok) return { kind: 'connection', status: token.status };
      usedRecently = token.usedRecently ?? false;
      const first = await send(token.accessToken, deadline);
      if (first.status !== 401) return first;
      await first.body?.cancel().catch(() => undefined);
      token = await validAccessToken(deps, connectionId, { force: true });
      if (!token.ok) return { kind: 'connection', status: token.status };
      return send(token.accessToken, deadline);
    };

    const outcome = async (deadline: DeadlineSignal): Promise<UpstreamOutcome> => {
      // Reads are retried by Temporal. A write runs one activity attempt only, so a worker that
      // dies mid-request never sends it again; within the attempt it is tried anew only while no
      // request can have left.
      let exchanged: Response | UpstreamOutcome;
      for (let tries = 1; ; tries++) {
        context.cancellationSignal.throwIfAborted();
        try {
          exchanged = await exchange(deadline);
          break;
        } catch (error) {
          if (scope === 'read' || attempt.mayHaveSent || tries >= WRITE_ATTEMPTS) throw error;
          await sleep(200 * 2 ** (tries - 1));
        }
      }
      if (!(exchanged instanceof Response)) return exchanged;
      const answered = await outcomeOf(exchanged, {
        app,
        target,
        raw: request.read === 'raw',
        limitBytes: config.api.bodyLimitBytes,
        timeoutMs,
      });
      if (answered.kind === 'response' && !usedRecently) {
        await recordUse(sql, context, connectionId);
      }
      return answered;
    };

    return heartbeating(context, async () => {
      // Cancelled too when Temporal gives up on this attempt: its caller has been answered.
      const deadline = deadlineSignal(timeoutMs, context.cancellationSignal);
      try {
        return await outcome(deadline);
      } finally {
        deadline.clear();
      }
    });
  };
}

/** Bookkeeping only: its failure must not turn a call the app served into an error. */
async function recordUse(sql: Sql, context: Context, connectionId: string): Promise<void> {
  await markConnectionUsed(sql, connectionId).catch((error: unknown) => {
    context.log.warn('marking the connection used failed', {
      error: error instanceof Error ? error.message : 'unknown',
    });
  });
}

/**
 * A write (a regular activity) heartbeats until its outcome is read, so a worker that dies
 * mid-request is noticed within the heartbeat timeout, not the activity's whole time limit.
 */
async function heartbeating<T>(context: Context, work: () => Promise<T>): Promise<T> {
  const beat = context.info.isLocal
    ? undefined
    : setInterval(() => {
        context.heartbeat();
      }, HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

/**
 * A call to a tool of a remote MCP server registered as an app. Its attempt heartbeats (a
 * regular activity's) with what it records of a task the server runs the tool as, so that an
 * attempt after a lost worker goes on with that task (activities/calls/mcp-tool-attempt.ts).
 */
async function remoteToolOutcome(
  deps: UpstreamDeps,
  call: UpstreamCall,
  context: Context,
): Promise<UpstreamOutcome> {
  const { target, environmentId } = call;
  if (target.kind !== 'action' || environmentId === undefined) {
    throw ApplicationFailure.nonRetryable(`unknown app ${target.app}`, 'UnknownApp');
  }
  const attempt = toolAttempt(context);
  try {
    const outcome = await mcpToolUpstream(
      {
        findApp: (environment, id, tool) => findMcpToolTarget(deps.sql, environment, id, tool),
        accessToken: (connectionId, options) => validAccessToken(deps, connectionId, options),
        stepUp: async (connectionId, scope) =>
          (await recordScopeStepUp(deps.sql, connectionId, scope)).stepUp,
        timeoutMs: deps.config.upstream.timeoutMs,
        limitBytes: deps.config.api.bodyLimitBytes,
        allowPrivate: deps.config.mcpApps.allowPrivate,
      },
      {
        environmentId,
        connectionId: call.connectionId,
        action: target.action,
        app: target.app,
        scope: target.scope,
        input: target.input,
      },
      context.cancellationSignal,
      attempt,
    );
    if (outcome.kind === 'response' && call.connectionId !== null) {
      await recordUse(deps.sql, context, call.connectionId);
    }
    return outcome;
  } finally {
    attempt.stop();
  }
}
