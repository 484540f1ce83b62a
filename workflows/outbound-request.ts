import { ApplicationFailure } from '@temporalio/common';
import type { CallTargetInput, OutboundRequest } from './call-types.js';
import { findAction, type ActionDefinition } from './catalog/index.js';
import { unsafePath } from './catalog/request-path.js';

function actionRequest(action: ActionDefinition, input: unknown): OutboundRequest {
  const built = action.request(input);
  // The API refused such input already (defineAction); this holds for anything that skipped it.
  const unsafe = unsafePath(built.path);
  if (unsafe) {
    throw ApplicationFailure.nonRetryable(
      `${action.app}.${action.name} built the path ${JSON.stringify(built.path)}: a segment ${unsafe.problem}`,
      'UnsafeRequestPath',
    );
  }
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(built.query ?? {})) {
    if (value !== undefined) query.append(name, String(value));
  }
  const search = query.toString();
  return {
    method: built.method,
    pathAndQuery: search ? `${built.path}?${search}` : built.path,
    headers: built.headers ?? {},
    body: built.body === undefined ? null : { kind: 'json', value: built.body },
    read: 'parsed',
  };
}

/**
 * The request the app receives: an action's, built from the catalog; or the proxy caller's,
 * with the path below `/v1/proxy/{app}/` as the API read it, the one policy judged.
 */
export function outboundRequest(target: CallTargetInput): OutboundRequest {
  if (target.kind === 'action') {
    const action = findAction(target.action);
    if (!action) throw new Error(`unknown action ${target.action}`);
    return actionRequest(action, target.input);
  }
  return {
    method: target.method,
    pathAndQuery: `/${target.path}${target.query ? `?${target.query}` : ''}`,
    headers: target.headers,
    body: target.bodyBase64 === null ? null : { kind: 'raw', base64: target.bodyBase64 },
    read: 'raw',
  };
}
