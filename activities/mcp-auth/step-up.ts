import type { Db } from '../../infra/database/client.js';
import { findConnectionAuthorization, saveStepUpScope } from '../db/mcp-authorizations.js';

const words = (scope: string | null | undefined) => (scope ?? '').split(' ').filter(Boolean);

/**
 * Scope step-up (MCP authorization, "Scope Challenge Handling"): the server answered a call
 * with 403 `insufficient_scope` and the scope it needs (`WWW-Authenticate: Bearer … scope=…`).
 * The wider scope (what the connection asked for, anything stepped up to before, and this) is
 * recorded for the connection's next reconnect, which asks for it; the connection stays active
 * for the calls its token allows. `stepUp: false` when every scope asked for now was asked for
 * already: the authorization server did not grant it, and asking again would only loop.
 */
export async function recordScopeStepUp(
  sql: Db,
  connectionId: string,
  challengedScope: string,
): Promise<{ stepUp: boolean; scope: string }> {
  const auth = await findConnectionAuthorization(sql, connectionId);
  if (!auth) throw new Error(`connection ${connectionId} is not an MCP app's`);
  const asked = new Set([...words(auth.scope), ...words(auth.stepUpScope)]);
  const wanted = words(challengedScope);
  const scope = [...new Set([...asked, ...wanted])].join(' ');
  if (wanted.every((word) => asked.has(word))) return { stepUp: false, scope };
  await saveStepUpScope(sql, connectionId, scope);
  return { stepUp: true, scope };
}
