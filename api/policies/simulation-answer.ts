import { z } from 'zod';
import type { Simulation } from '../../activities/policy/simulation.js';

const decision = z.enum(['allow', 'ask', 'deny']);
const decisions = z.object({ allow: z.int(), ask: z.int(), deny: z.int() });

/** The answer of POST /v1/policies/{id}/simulate. */
export const simulationAnswer = z
  .object({
    policy: z.object({
      id: z.string(),
      current_version: z
        .int()
        .nullable()
        .meta({ description: 'null when the candidate would create the policy' }),
    }),
    window: z.object({
      since: z.iso.datetime().nullable(),
      until: z.iso.datetime().nullable(),
      last: z.int().meta({ description: 'The most calls replayed' }),
      more: z
        .boolean()
        .meta({ description: 'The window holds more calls than `last`: the newest were replayed' }),
      oldest: z.iso
        .datetime()
        .nullable()
        .meta({ description: 'When the oldest call replayed was recorded' }),
      newest: z.iso.datetime().nullable(),
    }),
    calls: z.int().meta({
      description:
        'Calls replayed: `unchanged`, the `changes`, `cannot_judge` and `not_simulated` add up to it',
    }),
    unchanged: z.int(),
    changes: z
      .array(
        z.object({
          from: decision.meta({ description: 'The current version’s decision' }),
          to: decision.meta({ description: 'The candidate’s decision' }),
          count: z.int(),
          samples: z
            .array(z.string())
            .meta({ description: 'Audit event ids, newest first, at most 5' }),
        }),
      )
      .meta({ description: 'Decisions that would change, most calls first' }),
    cannot_judge: z
      .object({
        count: z.int(),
        samples: z.array(
          z.object({
            audit_id: z.string(),
            version: z.enum(['candidate', 'current']),
            current: decision,
            candidate: decision,
            reason: z.string(),
          }),
        ),
      })
      .meta({
        description:
          'Calls on which a condition of either version could not be judged (e.g. it reads proxy headers, which audit does not keep): counted here and not as changed or unchanged',
      }),
    not_simulated: z
      .object({ count: z.int(), reason: z.string() })
      .nullable()
      .meta({ description: 'Calls left when the time budget (20 s) was spent; null when none' }),
    decisions: z.object({ current: decisions, candidate: decisions }),
    took_ms: z.int(),
  })
  .meta({ id: 'PolicySimulation' });

const iso = (time: Date | null) => (time === null ? null : time.toISOString());

export function presentSimulation(simulation: Simulation): z.infer<typeof simulationAnswer> {
  const { window } = simulation;
  return {
    policy: { id: simulation.policyId, current_version: simulation.currentVersion },
    window: {
      since: iso(window.since),
      until: iso(window.until),
      last: window.last,
      more: window.more,
      oldest: iso(window.oldest),
      newest: iso(window.newest),
    },
    calls: simulation.calls,
    unchanged: simulation.unchanged,
    changes: simulation.changes,
    cannot_judge: {
      count: simulation.cannotJudge.count,
      samples: simulation.cannotJudge.samples.map((sample) => ({
        audit_id: sample.auditId,
        version: sample.version,
        current: sample.current,
        candidate: sample.candidate,
        reason: sample.reason,
      })),
    },
    not_simulated: simulation.notSimulated,
    decisions: simulation.decisions,
    took_ms: simulation.tookMs,
  };
}
