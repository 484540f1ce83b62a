import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import { upsertConnectedUser } from '../../activities/db/connected-users.js';
import { chooseClientForNewConnection } from '../../activities/oauth/credentials.js';
import type { CallAnswer, CallRequest } from '../../workflows/call-types.js';
import type { DirectoryAction } from '../../activities/apps/directory.js';
import { findApp } from '../../workflows/catalog/index.js';
import type { ApiDeps } from '../deps.js';
import { directoryCall } from '../calls/action-input.js';
import { answerCall, callAnswerError } from '../calls/call-answer.js';
import { callHeaders, callRequestFor } from '../calls/call-context.js';
import { refusable, type RefusedCall } from '../calls/refusals.js';
import { newConnectLink } from '../connect/links.js';
import { assertMcpAppConnectable } from '../connect/mcp-link-readiness.js';
import { assertAppConnectable } from '../connect/new-connect-link.js';
import { ApiError, NotFoundError } from '../errors.js';
import { checkAccess } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import type { CallWorkflows } from '../temporal/call-workflows.js';
import type { McpPrincipal } from './principal.js';
import type { TaskWaiters } from './tasks/task-waiters.js';
import { appAnswerResult, envelopeResult, toolResult } from './tool-results.js';
import { actionNameOf, appNameOf, sessionAction, toolName } from './tools.js';
import { offerByElicitation, type LinkOffer, type ToolCallExtra } from './url-elicitation.js';

/** What one MCP request's tool calls share. */
export interface ToolCallContext {
  deps: ApiDeps;
  calls: CallWorkflows;
  principal: McpPrincipal;
  /** The HTTP request carrying the tool call: its trace id, log and caller are the call's. */
  req: Request;
  res: Response;
  /** From the client's `Mcp-Session-Id` (client-session.ts). */
  urlElicitation: boolean;
  /** This process's waiting `tasks/result` requests. */
  taskWaiters: TaskWaiters;
}

const idempotencyHeader = callHeaders.pick({ 'Idempotency-Key': true });

/** Audit names a tool call that never started by what it asked: capped, whole characters. */
const MAX_ASKED_LENGTH = 200;

function refusedToolCall(
  principal: McpPrincipal,
  tool: string,
  args: Record<string, unknown> | undefined,
  action: DirectoryAction | null,
): RefusedCall {
  const asked = Array.from(actionNameOf(tool)).slice(0, MAX_ASKED_LENGTH).join('');
  return {
    action: action?.id ?? asked,
    scope: action?.scope ?? null,
    userExternalId: principal.userExternalId,
    request: { tool: Array.from(tool).slice(0, MAX_ASKED_LENGTH).join(''), input: args ?? null },
    via: 'mcp',
  };
}

/** Issues name the field as the tool's arguments do: `title`, not the run's `input.title`. */
function argumentsMessage(tool: string, error: ApiError): string {
  const issues = Array.isArray(error.extra.issues)
    ? (error.extra.issues as { path: string; message: string }[])
    : [];
  if (issues.length === 0) return error.message;
  const named = issues.map(
    (issue) => `${issue.path.replace(/^input\.?/, '') || '(arguments)'}: ${issue.message}`,
  );
  return `Invalid arguments for ${tool}: ${named.join('; ')}.`;
}

/** What one tool call came to: the tool result, and the call and answer when it was held. */
export type ToolCallOutcome =
  | { kind: 'answered'; result: CallToolResult }
  | {
      kind: 'held';
      result: CallToolResult;
      action: DirectoryAction;
      call: CallRequest;
      approval: HeldApproval;
    };

/**
 * `tools/call`: the same governed call as `POST /v1/actions/{action}/run` (validation, refusals
 * audited, the call workflow, the answer's envelope), arriving `via: "mcp"`. Only the answer's
 * form differs: a tool result, never an HTTP error.
 */
export async function callTool(
  ctx: ToolCallContext,
  tool: string,
  args: Record<string, unknown> | undefined,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  return (await runToolCall(ctx, tool, args, extra, {})).result;
}

/**
 * A tool call, with what a task needs of it when it is held. `idempotencyKey`: the key the call
 * carries when the request's own `Idempotency-Key` header names none (a task's).
 */
export async function runToolCall(
  ctx: ToolCallContext,
  tool: string,
  args: Record<string, unknown> | undefined,
  extra: ToolCallExtra,
  options: { idempotencyKey?: string },
): Promise<ToolCallOutcome> {
  const { deps, principal } = ctx;
  let started: { action: DirectoryAction; call: CallRequest };
  let found: DirectoryAction | null = null;
  try {
    started = await refusable(
      deps,
      ctx.req,
      ctx.res,
      () => refusedToolCall(principal, tool, args, found),
      async () => {
        found = await sessionAction(deps.sql, principal, tool);
        const action = found;
        if (!action) throw new NotFoundError(`Tool "${tool}"`);
        checkAccess(principal.caller, { operation: 'call' });
        const target = await directoryCall(action, args ?? {});
        // As for runs: a caller (a backend speaking MCP) that means two identical calls says so.
        const headers = parse(
          idempotencyHeader,
          { 'Idempotency-Key': ctx.req.get('idempotency-key') },
          'header',
        );
        const call = callRequestFor(
          principal.caller,
          principal.userExternalId,
          target,
          deps.config.approvals,
          { via: 'mcp', idempotencyKey: headers['Idempotency-Key'] ?? options.idempotencyKey },
        );
        return { action, call };
      },
    );
  } catch (error) {
    // MCP: an unknown tool is a protocol error; what a known tool refuses is the tool's answer.
    if (error instanceof NotFoundError) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${tool}`);
    }
    if (error instanceof ApiError) {
      return { kind: 'answered', result: envelopeResult(error, argumentsMessage(tool, error)) };
    }
    throw error;
  }
  let answer: CallAnswer;
  try {
    answer = await answerCall(ctx.calls, started.call, ctx.res.locals.traceId);
  } catch (error) {
    if (error instanceof ApiError) return { kind: 'answered', result: envelopeResult(error) };
    throw error;
  }
  const result = await resultOf(ctx, started.action, answer, extra);
  if (answer.kind === 'error' && answer.code === 'approval_required') {
    return {
      kind: 'held',
      result,
      action: started.action,
      call: started.call,
      approval: answer.extra.approval as HeldApproval,
    };
  }
  return { kind: 'answered', result };
}

/** A call's answer as a tool result: the app's answer, or why the call did not reach it. */
export async function resultOf(
  ctx: ToolCallContext,
  action: DirectoryAction,
  answer: CallAnswer,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const appName = appNameOf(action);
  switch (answer.kind) {
    case 'json':
      return appAnswerResult(appName, answer.body as Record<string, unknown>);
    case 'passthrough':
      // Only the proxy answers with the app's raw bytes.
      throw new Error(`action ${action.id} answered like a proxy call`);
    case 'error':
      break;
  }
  if (answer.code === 'approval_required') return heldResult(action, answer);
  if (answer.code === 'connection_required') return connectResult(ctx, action, extra);
  const error = await callAnswerError(answer, {
    sql: ctx.deps.sql,
    config: ctx.deps.config,
    environmentId: ctx.principal.caller.environmentId,
  });
  if (error.code === 'connection_expired' && typeof error.extra.reconnect_url === 'string') {
    return reconnectResult(ctx, action, error, error.extra.reconnect_url, extra);
  }
  return envelopeResult(error);
}

export interface HeldApproval {
  id: string;
  status: string;
  requested_from: string[];
  expires_at: string;
}

/** Offers a link the way the client can take it, and says in words what became of it. */
function offer(
  ctx: ToolCallContext,
  extra: ToolCallExtra,
  link: LinkOffer,
): { shown: boolean; sentence: string } {
  const shown = offerByElicitation(extra, ctx.urlElicitation, link, (error) => {
    ctx.req.log.debug({ err: error }, 'a URL elicitation got no answer');
  });
  return shown
    ? { shown, sentence: 'The person at this MCP client has been shown the link.' }
    : { shown, sentence: `Open: ${link.url}` };
}

/** Who may decide, in words for the model: it is never the agent itself (four eyes). */
function askedOf(approval: HeldApproval): string {
  return approval.requested_from.length > 0
    ? `A person asked by the policy decides it: ${approval.requested_from.map((who) => `"${who}"`).join(', ')}.`
    : 'Any person who may decide approvals, not this agent, decides it.';
}

/**
 * A held call answers at once (MCP clients drop a tool call after about a minute, and a person
 * may take a day): the approval, who is asked, when it lapses, and how to run it, which is the
 * same call again. Never a decision link, in the result or by elicitation: what a session shows
 * can reach the model, and so the governed agent (README, "Decision links"). People get links
 * from the `approval.requested` webhook or from an operator's `gatehouse approvals link`.
 */
function heldResult(
  action: DirectoryAction,
  answer: Extract<CallAnswer, { kind: 'error' }>,
): CallToolResult {
  const approval = answer.extra.approval as HeldApproval;
  const tool = toolName(action);
  const message = [
    `Held for approval: ${tool} has not run and nothing was sent to the app.`,
    `Approval ${approval.id} is ${approval.status} until ${approval.expires_at}.`,
    askedOf(approval),
    `Once a person approves it, call ${tool} again with exactly the same arguments: it then runs once and returns the app's answer. If it is rejected, the same call is denied.`,
  ].join(' ');
  return toolResult(
    {
      error: {
        code: answer.code,
        message,
        retryable: true,
        approval: {
          id: approval.id,
          status: approval.status,
          requested_from: approval.requested_from,
          expires_at: approval.expires_at,
        },
        retry: { tool, arguments: 'the same arguments' },
      },
    },
    { message, isError: true },
  );
}

/** Why a remote MCP app cannot be connected now (what link creation would answer), or null. */
async function mcpConnectProblem(
  ctx: ToolCallContext,
  environmentId: string,
  app: string,
): Promise<string | null> {
  try {
    await assertMcpAppConnectable(ctx.deps, environmentId, app);
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
}

/**
 * Why an OpenAPI app cannot be connected now (its OAuth flow has no client yet, its token URL is
 * refused), or null: checked as `POST /v1/connect/links` checks it.
 */
async function openApiConnectProblem(ctx: ToolCallContext, app: string): Promise<string | null> {
  const { caller } = ctx.principal;
  try {
    await assertAppConnectable(
      ctx.deps,
      { id: caller.environmentId, name: caller.environmentName },
      app,
    );
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error.message;
    throw error;
  }
}

/** No connection: a hosted connect link, made as `POST /v1/connect/links` makes one. */
async function connectResult(
  ctx: ToolCallContext,
  action: DirectoryAction,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  const { sql, config } = ctx.deps;
  const { caller, userExternalId } = ctx.principal;
  const app = findApp(action.app);
  const appName = appNameOf(action);
  const tool = toolName(action);
  const base = `The user has not connected ${appName}, so ${tool} did not run.`;
  const client = app
    ? await chooseClientForNewConnection(sql, config, caller.environmentId, app.id)
    : null;
  // A remote MCP app is connected through its authorization server, an OpenAPI app as its
  // document says: each checked as POST /v1/connect/links checks it, so the person is never sent
  // to a page that cannot work.
  const notConnectable =
    action.kind === 'catalog'
      ? client
        ? null
        : 'no OAuth client is configured for it'
      : action.kind === 'openapi'
        ? await openApiConnectProblem(ctx, action.app)
        : await mcpConnectProblem(ctx, caller.environmentId, action.app);
  if (notConnectable !== null) {
    const message = `${base} ${appName} cannot be connected in this environment yet (${notConnectable}).`;
    return toolResult(
      { error: { code: 'connection_required', message, retryable: false, app: action.app } },
      { message, isError: true },
    );
  }
  const user = await upsertConnectedUser(sql, caller.environmentId, userExternalId, undefined);
  const link = await newConnectLink(sql, config, {
    environmentId: caller.environmentId,
    connectedUserId: user.id,
    app: action.app,
  });
  const offered = offer(ctx, extra, {
    id: `connect-${link.id}`,
    url: link.url,
    message: `Connect ${appName} so the agent can act on it for you.`,
  });
  const message = `${base} The user connects it on a hosted page (the link works once, until ${link.expires_at}). ${offered.sentence} Then call ${tool} again.`;
  return toolResult(
    {
      error: {
        code: 'connection_required',
        message,
        retryable: false,
        app: action.app,
        ...(offered.shown ? {} : { connect_url: link.url }),
        expires_at: link.expires_at,
      },
    },
    { message, isError: true },
  );
}

/** An expired connection: its reconnect link, offered like a connect link. */
function reconnectResult(
  ctx: ToolCallContext,
  action: DirectoryAction,
  error: ApiError,
  url: string,
  extra: ToolCallExtra,
): CallToolResult {
  const appName = appNameOf(action);
  const tool = toolName(action);
  const offered = offer(ctx, extra, {
    id: `reconnect-${String(error.extra.connection_id)}`,
    url,
    message: `Your connection to ${appName} has expired: reconnect it so the agent can act on it.`,
  });
  const message = `The user's connection to ${appName} has expired, so ${tool} did not run. The user reconnects it on a hosted page. ${offered.sentence} Then call ${tool} again.`;
  // Shown to the person, the link stays out of the model's context (URL mode's purpose).
  const fields: Record<string, unknown> = { ...error.toEnvelope().error, message };
  if (offered.shown) delete fields.reconnect_url;
  return toolResult({ error: fields }, { message, isError: true });
}
