/**
 * Fetches an OpenAPI document once, from the URL an operator gave: the same outbound checks as a
 * remote MCP server's URL (https, or http on loopback with MCP_APPS_ALLOW_PRIVATE; no private,
 * loopback or link-local address unless that setting is on, checked on the address connected
 * to), no redirects followed, within UPSTREAM_TIMEOUT_MS, and read only up to the importer's own
 * size limit: what answers at the URL is whatever its host chose.
 */
import { IMPORT_LIMITS } from '../openapi-apps/index.js';
import { mcpServerFetch, ResponseTooLargeError } from '../mcp-apps/server-fetch.js';
import { serverUrlProblem } from '../mcp-apps/server-url.js';

/** Why the document could not be fetched: the operator's URL at fault (400 naming the field). */
export class DocumentFetchError extends Error {
  constructor(
    message: string,
    /** `document_url_unreachable` and `timeout` are the host's failure rather than the URL's. */
    readonly kind: 'url' | 'unreachable' | 'timeout' | 'too_large' | 'status',
  ) {
    super(message);
    this.name = 'DocumentFetchError';
  }
}

export async function fetchDocument(
  url: string,
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<Uint8Array> {
  const problem = await serverUrlProblem(url, options.allowPrivate);
  if (problem) throw new DocumentFetchError(problem, 'url');
  const fetcher = mcpServerFetch({
    allowPrivate: options.allowPrivate,
    maxResponseBytes: IMPORT_LIMITS.documentBytes,
  });
  const signal = AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await fetcher(url, {
      method: 'GET',
      headers: { accept: 'application/json, application/yaml, text/yaml, */*' },
      signal,
    });
  } catch (error) {
    if (signal.aborted) {
      throw new DocumentFetchError(
        `did not answer within ${String(options.timeoutMs)} ms`,
        'timeout',
      );
    }
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : 'network error';
    throw new DocumentFetchError(`could not be reached (${why})`, 'unreachable');
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new DocumentFetchError(
      `answered HTTP ${String(response.status)}${response.status >= 300 && response.status < 400 ? " (redirects are not followed: give the document's own URL)" : ''}`,
      'status',
    );
  }
  try {
    return new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    if (error instanceof ResponseTooLargeError || signal.aborted) {
      throw signal.aborted
        ? new DocumentFetchError(`did not answer within ${String(options.timeoutMs)} ms`, 'timeout')
        : new DocumentFetchError(
            `answered more than the ${String(IMPORT_LIMITS.documentBytes)} bytes an OpenAPI document may be (limit document_bytes)`,
            'too_large',
          );
    }
    // The stream fails with the cut's own error wrapped: tell a cut by its size.
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof ResponseTooLargeError) {
      throw new DocumentFetchError(
        `answered more than the ${String(IMPORT_LIMITS.documentBytes)} bytes an OpenAPI document may be (limit document_bytes)`,
        'too_large',
      );
    }
    throw new DocumentFetchError(
      `answer was cut off (${error instanceof Error ? error.message : 'unknown'})`,
      'unreachable',
    );
  }
}
