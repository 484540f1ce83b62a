import type { Response, RequestHandler } from 'express';
import type { Caller, Scope } from '../../activities/db/api-keys.js';
import { InsufficientAccessError, InvalidApiKeyError } from '../errors.js';

/**
 * What a route does, for a key's access level (read-only, standard, full): `read` any key may
 * do; `write` changes state; `call` runs an action or proxies to an app; `export` hands out tokens.
 */
export type Operation = 'read' | 'write' | 'call' | 'export';

export interface Requirement {
  operation: Operation;
  scope?: Scope;
  /** For settings that send data out of Gatehouse (the webhook endpoint): full keys only. */
  fullAccess?: boolean;
}

export function callerOf(res: Response): Caller {
  const caller = res.locals.caller;
  if (!caller) throw new InvalidApiKeyError();
  return caller;
}

export function checkAccess(caller: Caller, requirement: Requirement): void {
  const { operation, scope } = requirement;
  if (requirement.fullAccess && caller.access !== 'full') {
    throw new InsufficientAccessError('This needs a key with full access.', {
      required_access: 'full',
    });
  }
  if (caller.access === 'read_only' && operation !== 'read') {
    throw new InsufficientAccessError(
      operation === 'call'
        ? 'A read-only key cannot run actions or use the proxy.'
        : 'A read-only key can only read.',
      { required_access: 'standard' },
    );
  }
  if (operation === 'export' && caller.access !== 'full') {
    throw new InsufficientAccessError('Exporting tokens needs a key with full access.', {
      required_access: 'full',
    });
  }
  if (scope && !caller.scopes.includes(scope)) {
    throw new InsufficientAccessError(`This key lacks the scope "${scope}".`, {
      required_scope: scope,
    });
  }
}

export function authorize(requirement: Requirement): RequestHandler {
  return (_req, res, next) => {
    checkAccess(callerOf(res), requirement);
    next();
  };
}
