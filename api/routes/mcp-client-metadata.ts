import { Router } from 'express';
import { findEnvironmentByName, ENVIRONMENT_NAME } from '../../activities/db/environments.js';
import { getMcpClientBranding } from '../../activities/db/mcp-client-branding.js';
import {
  CLIENT_METADATA_PATH,
  clientMetadataUrl,
  metadataDocument,
} from '../../activities/mcp-auth/client-metadata.js';
import { connectRedirectUri } from '../../activities/oauth/redirect-uri.js';
import type { ApiDeps } from '../deps.js';
import { NotFoundError } from '../errors.js';

/**
 * Gatehouse's client ID metadata document for an environment: public, since an authorization server
 * fetches it to learn who the client presenting this URL is. Built from the environment's MCP
 * client branding; there is none without branding, nor where PUBLIC_URL is not https (the
 * document's URL is the client id, which must be https).
 */
export function mcpClientMetadataRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get(CLIENT_METADATA_PATH, async (req, res) => {
    const name = req.params.environment;
    const environment = ENVIRONMENT_NAME.test(name)
      ? await findEnvironmentByName(deps.sql, name)
      : null;
    const url = environment ? clientMetadataUrl(deps.config, environment.name) : null;
    const branding =
      environment && url ? await getMcpClientBranding(deps.sql, environment.id) : null;
    if (!url || !branding) throw new NotFoundError('Client metadata document');
    res
      // Authorization servers may keep it a while; a branding change shows within minutes.
      .set('Cache-Control', 'public, max-age=300')
      .json(metadataDocument(branding, connectRedirectUri(deps.config.api), url));
  });
  return router;
}
