import { z } from 'zod';
import {
  DEFAULT_SIMULATED_CALLS,
  MAX_SIMULATED_CALLS,
} from '../../activities/policy/simulation.js';
import type { CallWindow } from '../../activities/policy/recorded-calls.js';

/**
 * Which recorded calls a simulation replays, from the query string (the body is the candidate,
 * in the shape PUT takes). Shared with `gatehouse policies simulate`, which checks its flags with it.
 */
export const simulationQuery = z
  .strictObject({
    last: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_SIMULATED_CALLS)
      .optional()
      .meta({
        description: `The newest calls to replay, at most ${String(MAX_SIMULATED_CALLS)}; ${String(DEFAULT_SIMULATED_CALLS)} by default, or ${String(MAX_SIMULATED_CALLS)} within a window given by \`since\` or \`until\``,
      }),
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Calls recorded at or after this time (ISO 8601)' }),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Calls recorded before this time (ISO 8601)' }),
  })
  .refine(
    (q) =>
      q.since === undefined || q.until === undefined || Date.parse(q.since) < Date.parse(q.until),
    {
      message: 'since must be before until',
      path: ['until'],
    },
  )
  .meta({ id: 'SimulatePolicyQuery' });

export function callWindow(query: z.infer<typeof simulationQuery>): CallWindow {
  const windowed = query.since !== undefined || query.until !== undefined;
  return {
    since: query.since === undefined ? null : new Date(query.since),
    until: query.until === undefined ? null : new Date(query.until),
    last: query.last ?? (windowed ? MAX_SIMULATED_CALLS : DEFAULT_SIMULATED_CALLS),
  };
}
