import { Router } from 'express';
import { z } from 'zod';
import { recordConsoleChange } from '../../../activities/audit/console-changes.js';
import type { RegistryActor } from '../../../activities/mcp-apps/registry-audit.js';
import { MCP_APP_ID } from '../../../activities/apps/directory.js';
import { findMcpAppStanding, listMcpAppStandings } from '../../../activities/db/mcp-apps.js';
import {
  findOpenApiApp,
  findOpenApiAppStanding,
  listOpenApiAppStandings,
} from '../../../activities/db/openapi-apps.js';
import {
  acceptOpenApiAppSnapshot,
  OpenApiRegistryError,
} from '../../../activities/openapi-registry/registry.js';
import { presentOpenApiApp } from '../../presenters/openapi-apps.js';
import { renderOpenApiAppPage } from '../openapi-apps/app-page.js';
import { openApiSnapshotReview } from '../openapi-apps/snapshot-review.js';
import {
  acceptMcpAppSnapshot,
  RegistryError,
  type RegistryDeps,
} from '../../../activities/mcp-apps/registry.js';
import type { ApiDeps } from '../../deps.js';
import { presentMcpApp } from '../../presenters/mcp-apps.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf, formOf } from '../context.js';
import { viewerMay } from '../../people/console-viewer.js';
import { sendConsolePage } from '../respond.js';
import { sendConsoleNotice } from '../send-notice.js';
import { renderAppPage } from './app-page.js';
import { renderAppList } from './list-page.js';
import { snapshotReview } from './snapshot-review.js';

const snapshotVersion = z.coerce
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);

/** The accept form: the snapshot the page showed (the form token is the door's). */
const acceptForm = z.object({ version: snapshotVersion });
const appQuery = z.object({ accepted: snapshotVersion.optional() });

/**
 * Registered apps in the console (remote MCP servers and REST APIs imported from OpenAPI
 * documents, whose ids are one space): every app of the environment, one app with its tools or
 * operations, and the review of a pending snapshot with the Accept button. Accepting goes through
 * the registry's own accept (`acceptMcpAppSnapshot`, `acceptOpenApiAppSnapshot`), as the
 * management API and `gatehouse apps accept` do: the registry's own audit event names the person
 * (`person:<email>`, channel `console`), and the console records `console.apps.accept` beside it.
 */
export function mcpAppPages(deps: ApiDeps): Router {
  const router = Router({ mergeParams: true });
  const registry: RegistryDeps = { sql: deps.sql, config: deps.config };

  const unknownApp = (res: Parameters<typeof sendConsoleNotice>[0], base: string) => {
    sendConsoleNotice(res, 404, {
      title: 'No such app',
      message: 'This environment has no remote MCP app or OpenAPI app by that id.',
      action: { href: `${base}/apps`, label: 'To the apps' },
    });
  };

  router.get('/apps', requireRole('read'), async (_req, res) => {
    const context = consoleContextOf(res);
    const [standings, imported] = await Promise.all([
      listMcpAppStandings(deps.sql, context.environment.id),
      listOpenApiAppStandings(deps.sql, context.environment.id),
    ]);
    sendConsolePage(
      res,
      200,
      renderAppList({
        branding: context.branding,
        viewer: context.shown,
        apps: standings.map(presentMcpApp),
        openApiApps: imported.map(presentOpenApiApp),
      }),
    );
  });

  router.get('/apps/:app', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const id = String(req.params.app);
    const standing = MCP_APP_ID.test(id)
      ? await findMcpAppStanding(deps.sql, context.environment.id, id)
      : null;
    const query = appQuery.safeParse(req.query);
    const accepted = query.success ? query.data.accepted : undefined;
    if (!standing) {
      const imported = MCP_APP_ID.test(id)
        ? await findOpenApiAppStanding(deps.sql, context.environment.id, id)
        : null;
      if (!imported) {
        unknownApp(res, context.shown.base);
        return;
      }
      sendConsolePage(
        res,
        200,
        renderOpenApiAppPage({
          branding: context.branding,
          viewer: context.shown,
          app: presentOpenApiApp(imported),
          review: openApiSnapshotReview(imported),
          mayAccept: viewerMay(context.viewer, 'govern'),
          ...(accepted === undefined ? {} : { accepted }),
        }),
      );
      return;
    }
    sendConsolePage(
      res,
      200,
      renderAppPage({
        branding: context.branding,
        viewer: context.shown,
        app: presentMcpApp(standing),
        review: snapshotReview(standing),
        mayAccept: viewerMay(context.viewer, 'govern'),
        ...(accepted === undefined ? {} : { accepted }),
      }),
    );
  });

  router.post('/apps/:app/accept', requireRole('govern'), async (req, res) => {
    const context = consoleContextOf(res);
    const { session } = context.viewer;
    const base = context.shown.base;
    const id = String(req.params.app);
    const form = acceptForm.safeParse(formOf(req));
    if (!form.success) {
      sendConsoleNotice(res, 400, {
        title: 'That form could not be read',
        message: 'It names no snapshot version. Nothing was accepted.',
        action: { href: `${base}/apps/${id}`, label: 'Back to the app' },
      });
      return;
    }
    if (!MCP_APP_ID.test(id)) {
      unknownApp(res, base);
      return;
    }
    const { version } = form.data;
    const actor: RegistryActor = {
      environmentId: context.environment.id,
      agentId: `person:${session.email}`,
      channel: 'console',
      traceId: res.locals.traceId,
    };
    const kind = (await findOpenApiApp(deps.sql, context.environment.id, id)) ? 'openapi' : 'mcp';
    try {
      if (kind === 'openapi') await acceptOpenApiAppSnapshot(registry, actor, id, version);
      else await acceptMcpAppSnapshot(registry, actor, id, version);
    } catch (error) {
      if (!(error instanceof RegistryError) && !(error instanceof OpenApiRegistryError)) {
        throw error;
      }
      if (error.kind === 'no_such_version') {
        sendConsoleNotice(res, 404, {
          title: 'No such snapshot',
          message: `App “${id}” has no snapshot v${String(version)}. Nothing was accepted.`,
          action: { href: `${base}/apps/${id}`, label: 'Back to the app' },
        });
        return;
      }
      unknownApp(res, base);
      return;
    }
    await recordConsoleChange(deps.sql, {
      environmentId: context.environment.id,
      actor: session,
      action: 'console.apps.accept',
      target: { app: id, version },
      traceId: res.locals.traceId,
    });
    req.log.info(
      { app: id, version, personId: session.personId },
      kind === 'openapi'
        ? 'OpenAPI app snapshot accepted in the console'
        : 'MCP app snapshot accepted in the console',
    );
    res.redirect(303, `${base}/apps/${id}?accepted=${String(version)}`);
  });

  return router;
}
