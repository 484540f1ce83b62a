import { sendUntilDecided, waitApplied, type ApprovalRead } from './approval-wait.js';
import { durationMs, type Duration } from './duration.js';
import { GatehouseError, type ApprovalStatus } from './gatehouse-error.js';
import type { components, paths as ConnectedUserPaths } from './generated/connected-users.js';
import type { paths as ManagementPaths } from './generated/management.js';
import { createTransport, type Transport } from './transport.js';
import { typedClient, type TypedClient } from './typed-client.js';

export type ActionResult = components['schemas']['ActionResult'];

export interface GatehouseOptions {
  /** Where the API is, e.g. `http://127.0.0.1:3000` (no `/v1`). */
  baseUrl: string;
  /** `gk_<environment>_…`: the key decides the environment, the agent and what may be done. */
  apiKey: string;
  /**
   * How many times a failed request is sent again after a network failure or a retryable
   * answer (`rate_limited`, `service_unavailable`, …), with the same `Idempotency-Key`. Default 2.
   */
  maxRetries?: number;
  /** A fetch of your own (a proxy agent, a test double); default the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
}

/** What every governed call (an action run, a proxy call) takes besides its request. */
export interface CallOptions {
  /**
   * How long to wait for a person's decision when the policy holds the call: the call returns
   * its result once approved (run once), throws DeniedByPolicyError once rejected, and throws
   * ApprovalRequiredError when the time is up. Default: do not wait (throws at once).
   */
  waitForApproval?: Duration;
  /** The call's `Idempotency-Key`; default a new UUID for this call, kept across its retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export type ProxyMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ProxyRequest extends CallOptions {
  /** The user's external id (`Service-User`). */
  user: string;
  /** JSON (an object or array), or the bytes to send as they are. */
  body?: string | Uint8Array | Record<string, unknown> | unknown[];
  query?: Record<string, string | number | boolean> | URLSearchParams;
  /** Sent on to the app (except Gatehouse's own and hop-by-hop headers). */
  headers?: Record<string, string>;
}

type ApprovalRecord = components['schemas']['Approval'];

/**
 * The Gatehouse API for a backend: every operation of both interfaces, typed from the served
 * OpenAPI documents (`api` for the connected-user interface, `management` for the settings),
 * and the governed calls with their waiting: `run` and `proxy`.
 */
export class Gatehouse {
  /** Every connected-user operation: `gatehouse.api.GET('/v1/users/{user}', {params: …})`. */
  readonly api: TypedClient<ConnectedUserPaths>;
  /** Every management operation (business keys: answers are `{data: …}`). */
  readonly management: TypedClient<ManagementPaths>;
  readonly #baseUrl: string;
  readonly #transport: Transport;

  constructor(options: GatehouseOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#transport = createTransport({
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 2,
      fetch: options.fetch ?? ((request) => fetch(request)),
    });
    this.api = typedClient<ConnectedUserPaths>(this.#baseUrl, this.#transport);
    this.management = typedClient<ManagementPaths>(this.#baseUrl, this.#transport);
  }

  /**
   * Runs an action for a user: `{ok: true, data}`, or `{ok: false, data, upstream_status}` when
   * the app itself refused. Gatehouse's refusals throw their error class.
   */
  async run(
    action: string,
    call: { user: string; input?: Record<string, unknown> },
    options: CallOptions = {},
  ): Promise<ActionResult> {
    const key = options.idempotencyKey ?? crypto.randomUUID();
    const url = `${this.#baseUrl}/v1/actions/${encodeURIComponent(action)}/run`;
    const body = JSON.stringify({ user: call.user, input: call.input ?? {} });
    const send = async (waitSeconds: number | null) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'idempotency-key': key,
      };
      if (waitSeconds !== null) headers.prefer = `wait=${String(waitSeconds)}`;
      const request = new Request(url, { method: 'POST', headers, body, signal: options.signal });
      const response = await this.#transport(request);
      return (await response.json()) as ActionResult;
    };
    return this.#governed(send, options);
  }

  /**
   * Calls the app's own API as the user through the proxy: the app's answer as it is (a 404 of
   * the app is a Response, not an error). Gatehouse's refusals throw their error class, as do
   * the app's 400, 429 and 5xx, which Gatehouse turns into the `upstream_*` codes.
   *
   * The proxy forwards the request's headers to the app and they are part of the call, so it
   * sends no `Prefer`: a held proxy call is waited for on its approval.
   */
  async proxy(
    app: string,
    method: ProxyMethod,
    path: string,
    request: ProxyRequest,
  ): Promise<Response> {
    const key = request.idempotencyKey ?? crypto.randomUUID();
    const url = new URL(
      `${this.#baseUrl}/v1/proxy/${encodeURIComponent(app)}/${path.replace(/^\/+/, '')}`,
    );
    for (const [name, value] of new URLSearchParams(
      request.query instanceof URLSearchParams
        ? request.query
        : Object.entries(request.query ?? {}).map(([name, value]): [string, string] => [
            name,
            String(value),
          ]),
    )) {
      url.searchParams.append(name, value);
    }
    const headers: Record<string, string> = {
      ...request.headers,
      'service-user': request.user,
      'idempotency-key': key,
    };
    let body: string | Uint8Array | undefined;
    if (typeof request.body === 'string' || request.body instanceof Uint8Array) {
      body = request.body;
    } else if (request.body !== undefined) {
      body = JSON.stringify(request.body);
      headers['content-type'] ??= 'application/json';
    }
    const send = () =>
      this.#transport(new Request(url, { method, headers, body, signal: request.signal }), {
        passThrough: true,
      });
    return this.#governed(send, request);
  }

  /** A governed call, sent once, or until decided when the caller waits for approval. */
  #governed<T>(send: (waitSeconds: number | null) => Promise<T>, options: CallOptions) {
    if (options.waitForApproval === undefined) return send(null);
    return sendUntilDecided({
      send,
      readApproval: (id, waitSeconds) => this.#readApproval(id, waitSeconds, options.signal),
      waitMs: durationMs(options.waitForApproval),
      signal: options.signal,
    });
  }

  /**
   * An approval's status, or null when it could not be read (a key without `approvals:read`,
   * an outage that outlasted the retries): then the call itself is sent again to tell.
   */
  async #readApproval(
    id: string,
    waitSeconds: number,
    signal: AbortSignal | undefined,
  ): Promise<ApprovalRead | null> {
    const request = new Request(`${this.#baseUrl}/v1/approvals/${encodeURIComponent(id)}`, {
      headers: { prefer: `wait=${String(waitSeconds)}` },
      signal,
    });
    let response: Response;
    try {
      response = await this.#transport(request);
    } catch (error) {
      if (error instanceof GatehouseError) return null;
      throw error;
    }
    // A backend key reads the record itself; a business key the management shape {data: …}.
    const body = (await response.json()) as ApprovalRecord | { data: ApprovalRecord };
    const status: ApprovalStatus = 'data' in body ? body.data.status : body.status;
    return { status, waited: waitApplied(response.headers) };
  }
}
