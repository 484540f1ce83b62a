import { APPROVAL_PAGE_PATH } from '../../activities/approvals/link-token.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';

export type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A page the person at the MCP client should open: a connect or reconnect link, which only the
 * end user can use. Never a decision link: the person at an agent's MCP client is not someone
 * the agent cannot reach (README, "Decision links").
 */
export interface LinkOffer {
  /** Unique within this server (MCP requires it of an elicitation id). */
  id: string;
  url: string;
  message: string;
}

/**
 * Shows the link to the person at the MCP client with a URL-mode elicitation (MCP 2025-11-25),
 * when the client declared it can; returns whether it did. The link then reaches the person and
 * not the model, which is what URL mode is for.
 *
 * The request travels on the tool call's own response stream, ahead of the result, and is not
 * waited for: the tool answers at once either way (a held call must never block the agent), and
 * the person's accept or decline changes nothing here. The client's reply may reach another API
 * process, which has no request to match it with and drops it; that is harmless.
 */
export function offerByElicitation(
  extra: ToolCallExtra,
  clientSupportsIt: boolean,
  offer: LinkOffer,
  onFailure: (error: unknown) => void,
): boolean {
  if (new URL(offer.url).pathname.startsWith(`${APPROVAL_PAGE_PATH}/`)) {
    throw new Error('a decision link is never offered through MCP');
  }
  if (!clientSupportsIt) return false;
  extra
    .sendRequest(
      {
        method: 'elicitation/create',
        params: { mode: 'url', elicitationId: offer.id, url: offer.url, message: offer.message },
      },
      ElicitResultSchema,
    )
    // Ends when this request's server closes: the reply is not awaited (see above).
    .catch(onFailure);
  return true;
}
