import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { assertPublicLiteral, guardedLookup } from '../webhooks/endpoint-address.js';

/** The answer grew past `maxResponseBytes` while it was read. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the MCP server's answer is over ${String(limitBytes)} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

export interface ServerFetchOptions {
  /** MCP_APPS_ALLOW_PRIVATE: loopback and private addresses are refused unless set. */
  allowPrivate: boolean;
  /** Each answer is cut here: a server must not make Gatehouse hold an endless body. */
  maxResponseBytes: number;
  /** Told when an answer was cut, since the SDK reports the failed read in its own words. */
  onTooLarge?: () => void;
}

/** Statuses whose response has no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

function bodyOf(body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  // The proxy to an OpenAPI app sends the caller's bytes as they came.
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // The SDK sends JSON text, and its OAuth requests form parameters: nothing else is expected.
  throw new TypeError('only text or byte bodies are sent');
}

function headersOf(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    // A header Headers refuses (a malformed name or value) is left out rather than failing all.
    if (name !== undefined && value !== undefined) {
      try {
        headers.append(name, value);
      } catch {
        // left out
      }
    }
  }
  return headers;
}

/**
 * The fetch the MCP SDK's client transport and discovery use to reach a remote MCP server
 * registered as an app. Like webhook deliveries, and unless `allowPrivate`: an
 * IP-literal host must be public, and a name is resolved by the guarded lookup, so the address
 * checked is the address connected to (a DNS answer that changes after registration cannot
 * reach the internal network). Redirects are never followed here: the SDK follows those within
 * the server's origin itself, through this same fetch. Failures look like fetch's own
 * (`TypeError('fetch failed')` with the socket error as `cause`, the signal's reason on abort).
 */
export function mcpServerFetch(options: ServerFetchOptions): FetchLike {
  return (input, init = {}) => {
    const url = new URL(input);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return Promise.reject(new TypeError('fetch failed', { cause: new Error('not http(s)') }));
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    try {
      if (!options.allowPrivate) assertPublicLiteral(url);
    } catch (error) {
      return Promise.reject(new TypeError('fetch failed', { cause: error }));
    }
    const body = bodyOf(init.body);
    const headers = Object.fromEntries(new Headers(init.headers));
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise<Response>((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
        },
        (response) => {
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > options.maxResponseBytes) {
              options.onTooLarge?.();
              response.destroy(new ResponseTooLargeError(options.maxResponseBytes));
            }
          });
          const status = response.statusCode ?? 0;
          const answer = new Response(
            NO_BODY.has(status) ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>),
            {
              status,
              statusText: response.statusMessage ?? '',
              headers: headersOf(response.rawHeaders),
            },
          );
          resolve(answer);
        },
      );
      const abort = () => {
        request.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      request.on('close', () => signal?.removeEventListener('abort', abort));
      request.on('error', (error) => {
        const failure = signal?.aborted
          ? (signal.reason as Error)
          : new TypeError('fetch failed', { cause: error });
        reject(failure);
      });
      request.end(body);
    });
  };
}
