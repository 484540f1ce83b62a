import type { Db } from '../../infra/database/client.js';
import { insertAuditEvents } from '../db/audit-events.js';

/** Who changed something in the console: the person, as their identity provider names them. */
export interface ConsoleActor {
  issuer: string;
  subject: string;
  name: string;
  email: string;
}

export interface ConsoleChange {
  environmentId: string;
  actor: ConsoleActor;
  /** `console.<section>.<verb>`, e.g. `console.policies.save`, `console.grants.revoke`. */
  action: string;
  /** What was changed: ids and the new values that matter, never a secret. */
  target: Record<string, unknown>;
  traceId: string;
}

/**
 * A change made in the console is an audit event like a call: it joins the environment's hash
 * chain, so the record of who changed a policy or accepted a tool is as tamper-evident as the
 * calls it governs. `agent_id` is the person (`person:<email>`), `via` is `console`, and the
 * request keeps the person's issuer, subject and name beside what they changed.
 */
export async function recordConsoleChange(sql: Db, change: ConsoleChange): Promise<string> {
  const { actor } = change;
  const [id] = await insertAuditEvents(sql, [
    {
      environmentId: change.environmentId,
      action: change.action,
      scope: 'write',
      decision: 'allowed',
      reason: `by ${actor.name} <${actor.email}> in the console`,
      agentId: `person:${actor.email}`,
      via: 'console',
      userExternalId: null,
      connectedUserId: null,
      connectionId: null,
      approvalId: null,
      request: {
        person: {
          issuer: actor.issuer,
          subject: actor.subject,
          name: actor.name,
          email: actor.email,
        },
        ...change.target,
      },
      response: null,
      traceId: change.traceId,
      policyId: null,
      policyVersion: null,
    },
  ]);
  return id as string;
}
