import { Router, type Response } from 'express';
import { z } from 'zod';
import {
  recordConsoleChange,
  type ConsoleActor,
} from '../../../activities/audit/console-changes.js';
import {
  findConnectedUser,
  listConnectedUsers,
  type ConnectedUserSummary,
} from '../../../activities/db/connected-users.js';
import {
  findConnection,
  listConnectionsOfUsers,
  type Connection,
} from '../../../activities/db/connections.js';
import { createCheckedConnectLink } from '../../connect/new-connect-link.js';
import type { ApiDeps } from '../../deps.js';
import { ApiError, ServiceUnavailableError } from '../../errors.js';
import { externalUserId } from '../../http/external-user-id.js';
import { decodeCursor, page } from '../../http/id-cursor.js';
import { uuidString } from '../../http/ids.js';
import { viewerMay } from '../../people/console-viewer.js';
import { connectionWorkflowsFor } from '../../temporal/connection-workflows.js';
import { requireRole } from '../console-access.js';
import { consoleContextOf, type ConsoleContext } from '../context.js';
import { renderNotice } from '../pages/layout.js';
import { sendConsolePage } from '../respond.js';
import { userHref } from './connection-status.js';
import { renderConnectionsList } from './connections-list-page.js';
import {
  renderReconnectLink,
  renderRevokeConfirmation,
  renderUserConnections,
} from './user-connections-page.js';

/** Users on one page of the list; each brings its connections. */
const USERS_PER_PAGE = 25;

const blankIsAbsent = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const listQuery = z.object({
  user: z.preprocess(blankIsAbsent, externalUserId.optional()),
  cursor: z.preprocess(blankIsAbsent, z.string().max(4096).optional()),
});

const noticeQuery = z.object({
  revoked: uuidString().optional(),
  unchanged: uuidString().optional(),
});

function actorOf(context: ConsoleContext): ConsoleActor {
  const { session } = context.viewer;
  return {
    issuer: session.issuer,
    subject: session.subject,
    name: session.name,
    email: session.email,
  };
}

/**
 * The Connections section (`/console/<environment>/connections`): every role sees the
 * environment's users and their connections; operators (`govern`) revoke a connection, through
 * the revoke workflow `DELETE /v1/connections/{id}` starts, and make a connect link for a user to
 * connect an app again, checked as `POST /v1/connect/links` checks one. Each change is an audit
 * event of the person who made it.
 */
export function connectionsPages(deps: ApiDeps): Router {
  const router = Router();
  const workflows = connectionWorkflowsFor(deps);

  const notFound = (res: Response, context: ConsoleContext, what: string) => {
    sendConsolePage(
      res,
      404,
      renderNotice({
        branding: context.branding,
        viewer: context.shown,
        title: `No such ${what}`,
        message: `This environment has no ${what} by that name.`,
        action: { href: `${context.shown.base}/connections`, label: 'All connections' },
      }),
    );
  };

  async function userNamed(
    context: ConsoleContext,
    given: unknown,
  ): Promise<ConnectedUserSummary | null> {
    const parsed = externalUserId.safeParse(given);
    return parsed.success ? findConnectedUser(deps.sql, context.environment.id, parsed.data) : null;
  }

  /** The user and one of their connections, both of this environment, or null. */
  async function userConnection(
    context: ConsoleContext,
    params: Record<string, unknown>,
  ): Promise<{ user: ConnectedUserSummary; connection: Connection } | null> {
    const user = await userNamed(context, params.userId);
    const id = uuidString().safeParse(params.connectionId);
    if (!user || !id.success) return null;
    const connection = await findConnection(deps.sql, context.environment.id, id.data);
    return connection && connection.connectedUserId === user.id ? { user, connection } : null;
  }

  router.get('/connections', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const environmentId = context.environment.id;
    const typed = typeof req.query.user === 'string' ? req.query.user.slice(0, 300) : '';
    const parsed = listQuery.safeParse(req.query);
    let after: string | undefined;
    let problem: string | null = parsed.success
      ? null
      : 'That is not a user id: 1 to 255 characters, no control characters.';
    if (parsed.success && parsed.data.cursor !== undefined) {
      try {
        after = decodeCursor(parsed.data.cursor);
      } catch {
        problem = 'That page is not one of this list; start from the first.';
      }
    }
    if (!parsed.success || problem !== null) {
      sendConsolePage(
        res,
        400,
        renderConnectionsList({
          context,
          user: typed,
          problem,
          users: [],
          next: null,
          paged: false,
        }),
      );
      return;
    }
    let users: ConnectedUserSummary[];
    let next: string | null = null;
    if (parsed.data.user !== undefined) {
      const one = await findConnectedUser(deps.sql, environmentId, parsed.data.user);
      users = one ? [one] : [];
    } else {
      const rows = await listConnectedUsers(deps.sql, environmentId, {
        ...(after === undefined ? {} : { after }),
        // One more than a page tells whether another page follows.
        limit: USERS_PER_PAGE + 1,
      });
      ({ items: users, cursor: next } = page(rows, USERS_PER_PAGE));
    }
    const connections = await listConnectionsOfUsers(
      deps.sql,
      environmentId,
      users.map((user) => user.id),
    );
    sendConsolePage(
      res,
      200,
      renderConnectionsList({
        context,
        user: typed,
        problem: null,
        users: users.map((user) => ({
          user,
          connections: connections.filter((c) => c.connectedUserId === user.id),
        })),
        next,
        paged: after !== undefined,
      }),
    );
  });

  router.get('/connections/:userId', requireRole('read'), async (req, res) => {
    const context = consoleContextOf(res);
    const user = await userNamed(context, req.params.userId);
    if (!user) {
      notFound(res, context, 'user');
      return;
    }
    const connections = await listConnectionsOfUsers(deps.sql, context.environment.id, [user.id]);
    const said = noticeQuery.safeParse(req.query);
    const named = (id: string | undefined) =>
      id === undefined ? undefined : connections.find((connection) => connection.id === id);
    const revoked = said.success ? named(said.data.revoked) : undefined;
    const unchanged = said.success ? named(said.data.unchanged) : undefined;
    sendConsolePage(
      res,
      200,
      renderUserConnections({
        context,
        user,
        connections,
        mayGovern: viewerMay(context.viewer, 'govern'),
        notice: revoked
          ? { good: true, text: `The connection to ${revoked.app} is revoked.` }
          : unchanged
            ? { good: true, text: `The connection to ${unchanged.app} was already revoked.` }
            : null,
      }),
    );
  });

  router.get(
    '/connections/:userId/:connectionId/revoke',
    requireRole('govern'),
    async (req, res) => {
      const context = consoleContextOf(res);
      const found = await userConnection(context, req.params);
      if (!found) {
        notFound(res, context, 'connection');
        return;
      }
      if (found.connection.status === 'revoked') {
        res.redirect(
          303,
          `${userHref(context.shown.base, found.user.externalId)}?unchanged=${found.connection.id}`,
        );
        return;
      }
      sendConsolePage(res, 200, renderRevokeConfirmation({ context, ...found }));
    },
  );

  router.post(
    '/connections/:userId/:connectionId/revoke',
    requireRole('govern'),
    async (req, res) => {
      const context = consoleContextOf(res);
      const found = await userConnection(context, req.params);
      if (!found) {
        notFound(res, context, 'connection');
        return;
      }
      const { user, connection } = found;
      const here = userHref(context.shown.base, user.externalId);
      // As `DELETE /v1/connections/{id}`: revoking a revoked connection changes nothing.
      if (connection.status === 'revoked') {
        res.redirect(303, `${here}?unchanged=${connection.id}`);
        return;
      }
      await workflows.revoke(connection.id);
      await recordConsoleChange(deps.sql, {
        environmentId: context.environment.id,
        actor: actorOf(context),
        action: 'console.connections.revoke',
        target: { user: user.externalId, connection_id: connection.id, app: connection.app },
        traceId: res.locals.traceId,
      });
      req.log.info(
        { personId: context.viewer.session.personId, connectionId: connection.id },
        'connection revoked in the console',
      );
      res.redirect(303, `${here}?revoked=${connection.id}`);
    },
  );

  router.post(
    '/connections/:userId/:connectionId/reconnect-link',
    requireRole('govern'),
    async (req, res) => {
      const context = consoleContextOf(res);
      const found = await userConnection(context, req.params);
      if (!found) {
        notFound(res, context, 'connection');
        return;
      }
      const { user, connection } = found;
      let link;
      try {
        link = await createCheckedConnectLink(deps, context.environment, {
          user: user.externalId,
          app: connection.app,
        });
      } catch (error) {
        // The app cannot be connected now (no OAuth client, a server not ready): the operator is
        // told why; an outage is the console's 503 page.
        if (!(error instanceof ApiError) || error instanceof ServiceUnavailableError) throw error;
        sendConsolePage(
          res,
          error.status,
          renderNotice({
            branding: context.branding,
            viewer: context.shown,
            title: 'No link was made',
            message: error.message,
            action: { href: userHref(context.shown.base, user.externalId), label: 'Back' },
          }),
        );
        return;
      }
      await recordConsoleChange(deps.sql, {
        environmentId: context.environment.id,
        actor: actorOf(context),
        action: 'console.connections.reconnect_link',
        // The link's id and expiry, never its URL: the URL is the secret the user gets.
        target: {
          user: user.externalId,
          connection_id: connection.id,
          app: connection.app,
          link_id: link.id,
          expires_at: link.expires_at,
        },
        traceId: res.locals.traceId,
      });
      sendConsolePage(res, 200, renderReconnectLink({ context, user, app: connection.app, link }));
    },
  );

  return router;
}
