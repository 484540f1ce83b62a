/**
 * Four eyes: who may decide a held call, so that a governed agent can never approve its own
 * calls. Pure, so the API (which answers with the reason) and the call workflow (which refuses
 * the Update whatever path it came by) judge alike.
 */
export interface HeldCallParties {
  /** The agent whose call is held. */
  agentId: string;
  /** Who the policy asked to decide; empty means any decider who is not the agent. */
  requestedFrom: readonly string[];
}

/** Why `decider` may not decide this approval, or null when it may. */
export function deciderRefusal(parties: HeldCallParties, decider: string): string | null {
  if (decider === parties.agentId) {
    return `Agent "${decider}" made the held call, and an agent can never decide its own approval.`;
  }
  if (parties.requestedFrom.length > 0 && !parties.requestedFrom.includes(decider)) {
    return `This approval is requested from ${parties.requestedFrom.map((who) => `"${who}"`).join(', ')}; "${decider}" is not among them.`;
  }
  return null;
}
