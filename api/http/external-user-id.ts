import { z } from 'zod';

/** The one limit on a user's external id, in UTF-16 code units as everywhere in the API. */
export const EXTERNAL_USER_ID_MAX = 255;

// Control characters (Unicode Cc), without the `u` flag so the OpenAPI pattern stays portable.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const noControl = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/**
 * A user's external id (the caller's own id for its user), wherever the API takes one: connect
 * links, runs, the proxy's `Service-User`, `/v1/users/{user}` and the `user` filters. One schema,
 * so a user created through one route can always be named in every other.
 */
export const externalUserId = z
  .string()
  .min(1)
  .max(EXTERNAL_USER_ID_MAX)
  .regex(noControl, 'must not contain control characters');
