import type { PolicyDocument } from '../../workflows/policy.js';
import type { AgentSelection } from './recorded-calls.js';

type Governing = Pick<PolicyDocument, 'id' | 'agents'>;

/**
 * The agents policy `id` governs among `policies`, as governingPolicy decides: those it names
 * (no two policies name the same agent), and, when it is the policy for `*`, every agent no other
 * policy names.
 */
function governedBy(policies: readonly Governing[], id: string): AgentSelection {
  const policy = policies.find((p) => p.id === id);
  if (!policy) return { named: [], allBut: [] };
  const named = policy.agents.filter((agent) => agent !== '*');
  const forAll = policies.find((p) => p.agents.includes('*'))?.id === id;
  const namedElsewhere = policies
    .filter((p) => p.id !== id)
    .flatMap((p) => p.agents.filter((agent) => agent !== '*'));
  return { named, allBut: forAll ? [namedElsewhere] : [] };
}

/**
 * The agents whose calls a simulation replays: those policy `id` governs now, and those it would
 * govern as the candidate. An agent the candidate gives up is replayed too, under the policy that
 * would govern it then: that is the change the candidate makes to its calls.
 */
export function agentsConcerned(
  current: readonly Governing[],
  candidate: readonly Governing[],
  id: string,
): AgentSelection {
  const now = governedBy(current, id);
  const then = governedBy(candidate, id);
  return {
    named: [...new Set([...now.named, ...then.named])],
    allBut: [...now.allBut, ...then.allBut],
  };
}
