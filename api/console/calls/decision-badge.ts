import { html, type Html } from '../../connect/pages/html.js';
import type { AuditDecision } from '../../../workflows/call-types.js';

const tone: Record<AuditDecision, string> = {
  allowed: 'badge ok',
  blocked: 'badge',
  denied: 'badge bad',
  failed: 'badge bad',
};

/** An audit decision as a word in a badge: the word carries it, the colour only repeats it. */
export function decisionBadge(decision: AuditDecision): Html {
  return html`<span class="${tone[decision]}">${decision}</span>`;
}
