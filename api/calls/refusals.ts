import type { Request, Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { insertAuditEvents } from '../../activities/db/audit-events.js';
import type { Sql } from '../../infra/database/client.js';
import type { Via } from '../../workflows/call-types.js';
import type { CallScope } from '../../workflows/catalog/index.js';
import { ApiError, type Issue } from '../errors.js';

/** What a refused call's request says about it, as far as it can be read. */
export interface RefusedCall {
  /** `<app>.<action>` or `<app>.proxy`, as asked even when no such action or app exists. */
  action: string;
  /** null when the action is unknown. */
  scope: CallScope | null;
  /** null when the request named no valid user. */
  userExternalId: string | null;
  /** What was asked, as sent (audit `request`): input or proxy target, never a credential. */
  request: Record<string, unknown>;
  /** How the call came, where the route knows it (MCP); else read from `Gatehouse-Via`. */
  via?: Via;
}

/** Reasons are read by people: one line, not a whole list of a thousand unknown fields. */
const MAX_REASON_LENGTH = 1000;

/** `<code>: <why>`, e.g. `invalid_request: input.title: Too small: …; input.x: unknown field`. */
function reasonOf(error: ApiError): string {
  const issues = Array.isArray(error.extra.issues) ? (error.extra.issues as Issue[]) : [];
  const why =
    issues.length > 0
      ? issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')
      : error.message;
  const reason = `${error.code}: ${why}`;
  if (reason.length <= MAX_REASON_LENGTH) return reason;
  // Cut between characters: never half of a surrogate pair.
  return `${Array.from(reason)
    .slice(0, MAX_REASON_LENGTH - 1)
    .join('')}…`;
}

/**
 * Every call is recorded in the audit log, the refused ones too. Runs `check`, the part of a run or
 * proxy route that may refuse the call (access, path, body fields, input, headers); a refusal is
 * audited `denied` with its reason, in a row of its own, before it is answered.
 *
 * Where the line is: what the routes refuse is audited; what the edge refuses before a route
 * runs is not: a missing or wrong key (no agent is known, and anyone could fill the log), and a
 * body that cannot be read as a request (not JSON, too large, too deep, malformed text), since
 * nothing in it can be trusted to name a call.
 */
export async function refusable<T>(
  deps: { sql: Sql },
  req: Request,
  res: Response,
  describe: () => RefusedCall,
  // May read Postgres (whether an action is a remote MCP app's tool): awaited here, so its refusals
  // are audited like the others.
  check: () => T | Promise<T>,
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    const caller = res.locals.caller;
    if (error instanceof ApiError && caller) {
      const refused = describe();
      const via = refused.via ?? (req.get('gatehouse-via') === 'mcp' ? 'mcp' : 'api');
      // A refused call changed nothing, so a failed audit write must not turn the refusal into a
      // 500 that invites a retry: the refusal is answered, and the failure logged.
      await insertAuditEvents(deps.sql, [
        {
          id: uuidv7(),
          environmentId: caller.environmentId,
          action: refused.action,
          scope: refused.scope,
          decision: 'denied',
          reason: reasonOf(error),
          agentId: caller.agentId,
          via,
          userExternalId: refused.userExternalId,
          connectedUserId: null,
          connectionId: null,
          approvalId: null,
          request: {
            action: refused.action,
            user: refused.userExternalId,
            via,
            ...refused.request,
          },
          response: null,
          traceId: res.locals.traceId,
          policyId: null,
          policyVersion: null,
        },
      ]).catch((failure: unknown) => {
        req.log.error({ err: failure }, 'auditing a refused call failed');
      });
    }
    throw error;
  }
}
