import { RegistryError } from '../../activities/mcp-apps/registry.js';
import type { RegistryOperation } from '../../activities/mcp-apps/registry-audit.js';
import { ApiError, ConflictError, InvalidRequestError, NotFoundError } from '../errors.js';

/**
 * A registry refusal in the API's envelope. The server's own failures: not reached (503
 * `upstream_unavailable`), too slow (504 `upstream_timeout`), each with the status a gateway would
 * give; not an MCP server, or tools beyond the snapshot limits, is the operator's URL at fault when
 * registering (400 naming `server_url`) and the registered server failing when refreshing (503: it
 * may answer again).
 */
export function registryFailure(operation: RegistryOperation): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof RegistryError)) throw error;
    switch (error.kind) {
      case 'catalog_id':
        throw new InvalidRequestError(error.message, [
          { path: 'id', message: 'is the id of a catalog app' },
        ]);
      case 'server_url':
        throw new InvalidRequestError(`Invalid server_url: ${error.message}.`, [
          { path: 'server_url', message: error.message },
        ]);
      case 'id_taken':
      case 'no_connection':
      case 'needs_api':
      case 'now_protected':
        throw new ConflictError(error.message);
      case 'not_found':
      case 'no_such_version':
        throw new NotFoundError(error.message);
      case 'listing':
        break;
    }
    switch (error.listing) {
      case 'timeout':
        throw new ApiError('upstream_timeout', error.message, { upstream_status: 504 });
      case 'unauthorized':
        throw new ConflictError(
          `${error.message} Its user may have to reconnect; refresh again once they have.`,
        );
      case 'not_mcp':
        if (operation === 'register') {
          throw new InvalidRequestError(error.message, [
            { path: 'server_url', message: error.message },
          ]);
        }
        throw new ApiError('upstream_unavailable', error.message, { upstream_status: 503 });
      case 'unreachable':
      case undefined:
        throw new ApiError('upstream_unavailable', error.message, { upstream_status: 503 });
    }
  };
}
