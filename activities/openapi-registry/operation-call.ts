/**
 * The upstream step of a call to an operation of an OpenAPI app: the request is built only by
 * the importer's buildRequest from the accepted snapshot's descriptor (method and path template
 * from the document, each value in its own place, nothing undeclared), sent to the app's pinned
 * base URL with the user's credential where the operation takes it, and its answer parsed as
 * every action's is. The exchange itself (guarded connection, time and size limits, the credential
 * and its one refresh, writes sent once) is app-exchange.ts, shared with the proxy.
 */
import { ApplicationFailure, type Context } from '@temporalio/activity';
import type { Sql } from '../../infra/database/client.js';
import { MAX_ANSWER_DEPTH, textNestsDeeperThan } from '../../infra/json-nesting.js';
import type { UpstreamBody, UpstreamOutcome } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { findOpenApiOperationStanding } from '../db/openapi-apps.js';
import { buildRequest, RequestBuildError, type OpenApiRequest } from '../openapi-apps/index.js';
import { exchangeWithApp, refuseResentWrite, type ExchangeDeps } from './app-exchange.js';
import { connectionOf } from './connection-scheme.js';
import type { RequestCredential } from './operation-credential.js';

export interface OperationCallDeps extends ExchangeDeps {
  sql: Sql;
  /**
   * The user's connection, when the call sends its credential (the preparation settled it), as
   * the app's users now connect; absent: sent without one.
   */
  credential?: (kind: 'credential' | 'oauth2') => Promise<RequestCredential>;
}

export interface OperationCall {
  environmentId: string;
  app: string;
  action: string;
  scope: CallScope;
  input: unknown;
}

function parsedBody(bytes: Buffer): UpstreamBody {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return { kind: 'parsed', value: null };
  if (textNestsDeeperThan(text, MAX_ANSWER_DEPTH)) return { kind: 'parsed', value: text };
  try {
    return { kind: 'parsed', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'parsed', value: text };
  }
}

/**
 * Null when the environment has no OpenAPI app `call.app` (the caller then tries a remote MCP
 * app). The accepted descriptor is read again here: the call's preparation just checked it.
 */
export async function operationOutcome(
  deps: OperationCallDeps,
  call: OperationCall,
  context: Context | null,
): Promise<UpstreamOutcome | null> {
  const name = call.action.slice(call.app.length + 1);
  const standing = await findOpenApiOperationStanding(deps.sql, call.environmentId, call.app, name);
  if (!standing) return null;
  const descriptor = standing.accepted?.descriptors.find((one) => one.name === name);
  if (!descriptor) {
    throw ApplicationFailure.nonRetryable(
      `operation ${call.action} is in no accepted snapshot`,
      'UnknownAction',
    );
  }
  const write = call.scope !== 'read';
  refuseResentWrite(write, context);
  let request: OpenApiRequest;
  try {
    request = buildRequest(descriptor, call.input);
  } catch (error) {
    if (!(error instanceof RequestBuildError)) throw error;
    throw ApplicationFailure.nonRetryable(
      `the request cannot be built (${error.field}: ${error.message})`,
      'UpstreamRequestFailed',
    );
  }
  const connection = connectionOf(standing.app, standing.accepted);
  const credential =
    deps.credential && (connection.kind === 'credential' || connection.kind === 'oauth2')
      ? await deps.credential(connection.kind)
      : undefined;
  const url = new URL(`${standing.app.baseUrl}${request.path}`);
  const headers = new Headers(request.headers ?? {});
  headers.set('accept', 'application/json');
  let body: string | undefined;
  if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const answer = await exchangeWithApp(
    deps,
    {
      method: request.method,
      headers,
      query: new URLSearchParams(request.queryPairs),
      ...(body === undefined ? {} : { body }),
      target: (query) => {
        const target = new URL(url.href);
        target.search = query.toString();
        return target.href;
      },
    },
    credential,
    { write, context },
  );
  if (!('bytes' in answer)) return answer;
  return {
    kind: 'response',
    status: answer.status,
    headers: answer.headers,
    body: parsedBody(answer.bytes),
  };
}
