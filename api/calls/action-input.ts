import { z } from 'zod';
import type { DirectoryAction } from '../../activities/apps/directory.js';
import { ToolSchemaUnusable, toolInputIssues } from '../../activities/mcp-apps/tool-input.js';
import { operationInputCheck } from '../../activities/openapi-registry/operation-input.js';
import type { ActionCall } from '../../workflows/call-types.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';
import { ConflictError, InvalidRequestError, type Issue } from '../errors.js';

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

/**
 * A remote MCP tool's input, checked against the accepted snapshot's JSON Schema (ajv) with the
 * same `input.`-named issues. A tool no operator has accepted has no schema calls may trust: its
 * call goes on unchecked, to be refused by the pinning rule when it is prepared.
 */
async function validToolInput(
  action: Extract<DirectoryAction, { kind: 'mcp' }>,
  input: Record<string, unknown>,
): Promise<unknown> {
  if (!action.callable.accepted) return input;
  let issues;
  try {
    // Checked in the schema thread: compiling a schema the API has not met yet, or running a
    // pattern on the agent's input, never holds the API's event loop.
    issues = await toolInputIssues(action.tool.inputSchema, input);
  } catch (error) {
    if (!(error instanceof ToolSchemaUnusable)) throw error;
    // A schema accepted before a rule that now refuses it (an `$async` one): the tool cannot be
    // called until its server's listing is accepted again, as the pinning rule says when it runs.
    const why = error.message;
    throw new ConflictError(
      `The accepted input schema of ${action.id} cannot check input (${why}); an operator must accept a listing of its server again.`,
    );
  }
  const first = issues[0];
  if (!first) return input;
  throw new InvalidRequestError(
    `Invalid input for ${action.id} (${first.path}: ${first.message}).`,
    issues,
  );
}

/**
 * An OpenAPI operation's input, checked against the accepted descriptor's input schema and by
 * building its request (activities/openapi-registry/operation-input.ts), with the same
 * `input.`-named issues. An operation no operator has accepted goes on unchecked, to be refused
 * by the pinning rule when it is prepared.
 */
async function validOperationInput(
  action: Extract<DirectoryAction, { kind: 'openapi' }>,
  input: Record<string, unknown>,
): Promise<unknown> {
  if (!action.callable.accepted) return input;
  const checked = await operationInputCheck(action.callable.descriptor, input);
  if (checked.ok) return input;
  if ('unusable' in checked) {
    throw new ConflictError(
      `The accepted input schema of ${action.id} cannot check input (${checked.unusable}); an operator must accept a snapshot of its document again.`,
    );
  }
  const issues = checked.issues.map((issue) => ({
    path: issue.path.startsWith('input') ? issue.path : `input.${issue.path}`,
    message: issue.message,
  }));
  const [first] = issues;
  throw new InvalidRequestError(
    `Invalid input for ${action.id}${first ? ` (${first.path}: ${first.message})` : ''}.`,
    issues,
  );
}

/**
 * What a run of any action of the environment asks, its input validated: a catalog action by
 * its zod schema, a remote MCP tool by its JSON Schema, graded as the tool is now. Runs and MCP
 * tool calls alike, so both start the same call for the same arguments.
 */
export async function directoryCall(
  action: DirectoryAction,
  input: Record<string, unknown>,
): Promise<ActionCall> {
  if (action.kind === 'catalog') return actionCall(action.action, validInput(action.action, input));
  return {
    kind: 'action',
    action: action.id,
    app: action.app,
    scope: action.scope,
    input:
      action.kind === 'openapi'
        ? await validOperationInput(action, input)
        : await validToolInput(action, input),
  };
}

/** What `GET /v1/actions/{action}` and MCP's `inputSchema` publish, for either kind. */
export function directoryInputSchema(action: DirectoryAction): Record<string, unknown> {
  if (action.kind === 'openapi') return action.callable.descriptor.inputSchema;
  return action.kind === 'catalog' ? inputJsonSchema(action.action) : action.tool.inputSchema;
}
