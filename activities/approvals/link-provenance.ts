/**
 * Decision links belong to people (README, "Decision links"): a link goes out only through
 * channels the governed agent cannot read, and each stored link records which one, so the page
 * can refuse a link that reached the agent anyway.
 */

/**
 * `webhook`: `approval.requested`, delivered to the environment's endpoint. `cli`: an operator's
 * `gatehouse approvals link`. `email`: an approval e-mail, sent to one person through the
 * environment's SMTP relay. No MCP result, elicitation or API answer is a channel.
 */
export type LinkChannel = 'webhook' | 'cli' | 'email';

/** Where a link went out. Rows stored before migration 017 record neither field. */
export interface LinkProvenance {
  channel: LinkChannel | null;
  /**
   * The agent of the API key through which the link was obtained (for a webhook: the key that
   * set the endpoint it was delivered to; for an e-mail: the key that set the SMTP relay it was
   * sent through, which reads every message); null when no key was involved (the CLI, a relay
   * set by an operator's command or in the console).
   */
  keyAgentId: string | null;
}

/**
 * Why a decision through this link is refused, or null. A link obtained through the held call's
 * own agent reached that agent's hands, so it never decides the call, whichever approver it
 * names (the generic `approval-link` included): four eyes holds even when a link leaks.
 */
export function linkRefusal(held: { agentId: string }, link: LinkProvenance): string | null {
  if (link.keyAgentId === null || link.keyAgentId !== held.agentId) return null;
  const through =
    link.channel === 'webhook'
      ? `This link was delivered to the webhook endpoint that agent "${held.agentId}" set with its own key`
      : link.channel === 'email'
        ? `This link was e-mailed through the SMTP relay that agent "${held.agentId}" set with its own key`
        : `This link was obtained through agent "${held.agentId}"'s own key`;
  return `${through}, and a link that went through the agent whose call is held can never decide it. Decide with your own key (POST /v1/approvals/{id}/approve), or ask an operator for a link (gatehouse approvals link).`;
}
