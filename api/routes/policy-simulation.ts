import { Router } from 'express';
import { findPolicy } from '../../activities/db/policies.js';
import { simulatePolicy } from '../../activities/policy/simulation.js';
import type { ApiDeps } from '../deps.js';
import { ConflictError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { presentSimulation, simulationAnswer } from '../policies/simulation-answer.js';
import { callWindow, simulationQuery } from '../policies/simulation-inputs.js';
import { policyApproval, policyIdParam, replacePolicyBody } from './policies.js';

/**
 * Simulating reveals the audited calls of every governed agent, and is what whoever is about to
 * change a policy does: it takes the scope PUT takes, which agents' standard keys lack.
 */
const SIMULATE = { operation: 'read', scope: 'policies:manage' } as const;

registerConnectedUserOperation({
  method: 'post',
  path: '/v1/policies/{id}/simulate',
  operationId: 'simulate_policy',
  summary: 'Try a candidate policy on the recorded calls, changing nothing',
  description:
    'The body is a candidate version, in the shape `PUT /v1/policies/{id}` takes (checked alike: a condition that does not parse is 400 naming the rule and the position). ' +
    'The calls of the agents the policy governs now or would govern (the newest `last`, within `since`/`until` when given) are judged by the current version and by the candidate, both now, each on the call as audit recorded it (`now` is when it was recorded), and the answer counts the decisions that would change, with audit ids as samples, and the calls a condition could not be judged on. ' +
    'An id without a policy is simulated as the policy PUT would create. The rows of one held call (its approval) count once; Idempotency-Key replays, refused calls and calls stopped before the policy decided are not replayed. ' +
    'Nothing is written. Needs scope `policies:manage`.',
  request: {
    params: policyIdParam,
    query: simulationQuery,
    body: { content: { 'application/json': { schema: replacePolicyBody } }, required: true },
  },
  response: simulationAnswer,
  errors: [],
  requires: SIMULATE,
  errorExamples: [
    {
      when: 'the candidate names an agent another policy governs',
      error: new ConflictError('Agent "billing-bot" is already governed by policy "default".', {
        agent: 'billing-bot',
        policy: 'default',
      }),
    },
  ],
});

/** Try a policy before it governs. */
export function policySimulationRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.post('/v1/policies/:id/simulate', authorize(SIMULATE), async (req, res) => {
    const { id } = parse(policyIdParam, req.params, 'path');
    const query = parse(simulationQuery, req.query, 'query');
    const body = parse(replacePolicyBody, req.body, 'body');
    const environmentId = callerOf(res).environmentId;
    // Refused as PUT would refuse it: approval settings its rules could never meet.
    const current = await findPolicy(deps.sql, environmentId, id);
    const outcome = await simulatePolicy(
      deps.sql,
      environmentId,
      id,
      { ...body, approval: policyApproval(body, current?.approval) },
      callWindow(query),
    );
    if (!outcome.ok) {
      throw new ConflictError(
        `Agent "${outcome.agent}" is already governed by policy "${outcome.claimedBy}".`,
        { agent: outcome.agent, policy: outcome.claimedBy },
      );
    }
    res.json(presentSimulation(outcome.simulation));
  });
  return router;
}
