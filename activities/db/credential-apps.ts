import type { Db } from '../../infra/database/client.js';
import { findApp } from '../../workflows/catalog/index.js';
import { schemeProblem, type CredentialScheme } from '../credentials/schemes.js';
import { findMcpApp } from './mcp-apps.js';

/**
 * An app of an environment whose users connect with a credential they enter on the hosted connect
 * page (table `credential_app_schemes`). Whoever registers such an app declares it here; the
 * connect flow and link creation read it through `findCredentialApp`.
 */
export interface CredentialApp {
  environmentId: string;
  id: string;
  /** What the page calls the app. */
  name: string;
  scheme: CredentialScheme;
  /** Shown under the field: where the user finds the credential, what it is for. */
  hint: string | null;
  /** Who declared it (e.g. `openapi`): each registry removes only its own. */
  declaredBy: string;
}

/** A declaration that cannot be saved, and why. */
export class CredentialAppRefused extends Error {}

interface Row {
  environmentId: string;
  appId: string;
  name: string;
  scheme: 'api_key' | 'bearer' | 'basic';
  keyIn: 'header' | 'query' | null;
  keyName: string | null;
  hint: string | null;
  declaredBy: string;
}

function fromRow(row: Row): CredentialApp {
  const scheme: CredentialScheme =
    row.scheme === 'api_key'
      ? { scheme: 'api_key', in: row.keyIn ?? 'header', name: row.keyName ?? '' }
      : { scheme: row.scheme };
  return {
    environmentId: row.environmentId,
    id: row.appId,
    name: row.name,
    scheme,
    hint: row.hint,
    declaredBy: row.declaredBy,
  };
}

/**
 * Declares (or re-declares) an app as taking a credential. Connections made before keep the
 * scheme they were entered with; a changed scheme applies to the next connect or reconnect.
 * Refused: an id of the catalog or of a remote MCP app of the environment (a link names one app),
 * and a header or query name that cannot carry a key.
 */
export async function saveCredentialApp(sql: Db, app: CredentialApp): Promise<void> {
  if (!/^[a-z0-9][a-z0-9_-]{0,99}$/.test(app.id)) {
    throw new CredentialAppRefused(`"${app.id}" is not an app id`);
  }
  if (findApp(app.id) || (await findMcpApp(sql, app.environmentId, app.id))) {
    throw new CredentialAppRefused(`app id "${app.id}" is taken by another app`);
  }
  const problem = schemeProblem(app.scheme);
  if (problem) throw new CredentialAppRefused(problem);
  const name = app.name.trim().slice(0, 200) || app.id;
  const hint = app.hint?.trim().slice(0, 500) || null;
  const keyIn = app.scheme.scheme === 'api_key' ? app.scheme.in : null;
  const keyName = app.scheme.scheme === 'api_key' ? app.scheme.name : null;
  await sql`
    insert into credential_app_schemes (environment_id, app_id, name, scheme, key_in, key_name, hint,
      declared_by)
    values (${app.environmentId}, ${app.id}, ${name}, ${app.scheme.scheme}, ${keyIn}, ${keyName},
      ${hint}, ${app.declaredBy})
    on conflict (environment_id, app_id) do update set
      name = excluded.name, scheme = excluded.scheme, key_in = excluded.key_in,
      key_name = excluded.key_name, hint = excluded.hint, declared_by = excluded.declared_by,
      updated_at = now()`;
}

/** The declaration of an app, or null when the app takes no entered credential. */
export async function findCredentialApp(
  sql: Db,
  environmentId: string,
  appId: string,
): Promise<CredentialApp | null> {
  const [row]: [Row?] = await sql`
    select environment_id, app_id, name, scheme, key_in, key_name, hint, declared_by
    from credential_app_schemes where environment_id = ${environmentId} and app_id = ${appId}`;
  return row ? fromRow(row) : null;
}

/**
 * Withdraws a declaration (its app removed, or no longer taking a credential); only `declaredBy`'s
 * own. Run it in a transaction. The app's credential connections are revoked with it (secrets
 * erased, rows kept for audit): an app declared later under the same id may be another service,
 * which must never receive these users' credentials. How many were revoked, or null when there was
 * no such declaration.
 */
export async function removeCredentialApp(
  sql: Db,
  environmentId: string,
  appId: string,
  declaredBy: string,
): Promise<{ revokedConnections: number } | null> {
  const rows = await sql`
    delete from credential_app_schemes
    where environment_id = ${environmentId} and app_id = ${appId} and declared_by = ${declaredBy}
    returning app_id`;
  if (rows.length === 0) return null;
  const revoked = await sql`
    update connections set status = 'revoked', credential_sealed = null,
      revoked_at = coalesce(revoked_at, now()), updated_at = now()
    where environment_id = ${environmentId} and app = ${appId} and auth_kind = 'credential'
      and status <> 'revoked'`;
  return { revokedConnections: revoked.count };
}
