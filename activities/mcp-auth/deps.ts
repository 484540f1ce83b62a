import type { Config } from '../../infra/config.js';
import type { Sql } from '../../infra/database/client.js';
import type { Logger } from '../../infra/logger.js';
import { clientMetadataUrl } from './client-metadata.js';

/** What the MCP authorization activities are built from. */
export interface McpAuthDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  /**
   * Where this environment's client ID metadata document is, over the one PUBLIC_URL gives: the
   * conformance runner presents the URL its scenario expects (test/mcp-auth), since a test
   * deployment on http has none of its own.
   */
  clientMetadataUrl?: (environmentName: string) => string | null;
}

export function metadataUrlOf(deps: McpAuthDeps, environmentName: string): string | null {
  return deps.clientMetadataUrl
    ? deps.clientMetadataUrl(environmentName)
    : clientMetadataUrl(deps.config, environmentName);
}
