import { z } from 'zod';
import type { ActionCall } from '../../workflows/call-types.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';
import { InvalidRequestError, type Issue } from '../errors.js';

/**
 * The action's own schema, its issues named under `input.` as the caller sent them. Runs and MCP
 * tool calls validate alike, so both start the same call for the same arguments.
 */
export function validInput(action: ActionDefinition, input: Record<string, unknown>): unknown {
  const result = action.input.safeParse(input);
  if (result.success) return result.data;
  const issues: Issue[] = result.error.issues.flatMap((issue) => {
    const base = ['input', ...issue.path.map(String)].join('.');
    return issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: `${base}.${key}`, message: 'unknown field' }))
      : [{ path: base, message: issue.message }];
  });
  const first = issues[0];
  throw new InvalidRequestError(
    `Invalid input for ${action.app}.${action.name}${first ? ` (${first.path}: ${first.message})` : ''}.`,
    issues,
  );
}

/** What an agent is told to send: `GET /v1/actions/{action}` and MCP's `inputSchema` alike. */
export function inputJsonSchema(action: ActionDefinition): Record<string, unknown> {
  return z.toJSONSchema(action.input, { target: 'draft-2020-12', io: 'input' });
}

/** What a run of this action with this (validated) input asks, over REST or MCP alike. */
export function actionCall(action: ActionDefinition, input: unknown): ActionCall {
  return {
    kind: 'action',
    action: `${action.app}.${action.name}`,
    app: action.app,
    scope: action.scope,
    input,
  };
}
