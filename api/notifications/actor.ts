import type { Response } from 'express';
import type { NotificationActor } from '../../activities/audit/notification-changes.js';
import type { Issue } from '../../activities/notifications/changes.js';
import { InvalidRequestError } from '../errors.js';
import { callerOf } from '../http/authorize.js';

/** The key that changes the notifications, recorded with the change (and as its setter). */
export function notificationActorOf(res: Response): NotificationActor {
  const caller = callerOf(res);
  return {
    environmentId: caller.environmentId,
    agentId: caller.agentId,
    channel: 'api',
    key: { id: caller.keyId, name: caller.keyName },
    traceId: res.locals.traceId,
  };
}

/** A refused change, in the error envelope, each problem named by its field as a body's are. */
export function refusedChange(
  issues: readonly Issue[],
  location: 'body' | 'path',
): InvalidRequestError {
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid input';
  return new InvalidRequestError(`Invalid request ${location} (${summary}).`, [...issues]);
}
