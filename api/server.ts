import { createServer, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createApp } from './app.js';
import type { ApiDeps } from './deps.js';
import { ApiError, InvalidRequestError } from './errors.js';

/**
 * Room for the longest request line and headers the contract allows: a list cursor of 4,096
 * non-ASCII characters is up to 36 KiB percent-encoded, beside filters of up to 255 such
 * characters and the usual headers. Node's default (16 KiB) would refuse it with a bare 431.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** A whole HTTP/1.1 answer carrying the error envelope, for a socket no request object owns. */
function rawAnswer(error: ApiError): string {
  const body = JSON.stringify(error.toEnvelope());
  return [
    `HTTP/1.1 ${String(error.status)} ${STATUS_CODES[error.status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${String(Buffer.byteLength(body))}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The answer to what Node's HTTP parser refused: the envelope, but for a request that timed out. */
function clientErrorAnswer(code: string | undefined): string {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return rawAnswer(
        new ApiError(
          'headers_too_large',
          `The request line and headers exceed ${String(MAX_HEADER_BYTES)} bytes.`,
          { limit_bytes: MAX_HEADER_BYTES },
        ),
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return rawAnswer(new ApiError('payload_too_large', 'The chunk extensions are too large.'));
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // The client never finished its request; nothing in the envelope would help it.
      return 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
    default:
      return rawAnswer(
        new InvalidRequestError('The request is not valid HTTP/1.1.', [
          { path: 'request', message: 'could not be parsed' },
        ]),
      );
  }
}

const answered = new WeakSet<Socket>();

/**
 * Node answers requests its parser refuses (oversized headers, bytes that are not HTTP) with a
 * bare status line; these get the envelope every other failure has. As Node does, only while no
 * response has begun on the socket, so a pipelined answer is never corrupted.
 */
function onClientError(error: Error & { code?: string }, socket: Socket): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorAnswer(error.code));
  // Drains what the client is still sending: closing with unread bytes would reset the
  // connection, and the client could lose the answer.
  socket.resume();
  socket.setTimeout(5_000, () => socket.destroy());
}

/** How long an idle connection is kept open. */
const KEEP_ALIVE_MS = 65_000;

/**
 * The API's HTTP server, answering nothing yet. `gatehouse dev` makes it and binds its port
 * before anything else starts, so no other program can take the port while the rest starts;
 * `startApiServer` then gives it the app.
 */
export function createApiHttpServer(): Server {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES });
  // A client or load balancer reuses an idle connection until its own idle timeout (60 s for the
  // common ones); Node's 5 s default closes it first, and a request sent on it in that moment is
  // reset. So the API keeps idle connections longer than they do, and says so (Keep-Alive).
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // Above keepAliveTimeout, as Node requires for a kept connection's next request.
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  server.on('clientError', onClientError);
  return server;
}

/**
 * Starts answering: on `listen`, a port (`deps.config.api.port` by default) bound here, or a
 * server from `createApiHttpServer` already listening. `close` stops taking requests and waits
 * for those in flight.
 */
export async function startApiServer(
  deps: ApiDeps,
  listen: number | Server = deps.config.api.port,
): Promise<RunningApi> {
  const server = typeof listen === 'number' ? createApiHttpServer() : listen;
  if (typeof listen === 'number') {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen, deps.config.api.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }
  server.on('request', createApp(deps));
  const address = server.address();
  const boundPort = address && typeof address === 'object' ? address.port : deps.config.api.port;
  return {
    url: `http://${deps.config.api.host}:${boundPort}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error) reject(error);
          else resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
