import type { ApprovalView } from '../../../workflows/call-types.js';
import type { GrantRequest } from '../../../workflows/grant-types.js';
import { html, type Html } from '../../connect/pages/html.js';
import { keep } from '../../connect/pages/parts.js';
import { duration, utcTime } from './time.js';

/** The lengths offered, where the policy allows them; its maximum is always offered too. */
const LENGTHS = [900, 3_600, 4 * 3_600, 8 * 3_600, 86_400, 7 * 86_400];

export function grantLengths(maxSeconds: number): number[] {
  const offered = LENGTHS.filter((seconds) => seconds < maxSeconds);
  return maxSeconds > 0 ? [...offered, maxSeconds] : [];
}

/**
 * Beside Approve, the choice to let the same action through without asking for a while. Shown only
 * when the policy allows grants (`maxSeconds` > 0); "only this call" is chosen until the approver
 * picks otherwise, and the choice is ignored by Reject.
 */
export function grantChoice(approval: ApprovalView, maxSeconds: number): Html | null {
  const lengths = grantLengths(maxSeconds);
  if (lengths.length === 0) return null;
  const action = html`<code>${approval.action}</code>`;
  return html`<fieldset class="grant">
    <legend>When approving, also allow without asking</legend>
    <label><input type="radio" name="grant" value="" checked /> Nothing more: only this call</label>
    <label
      ><input type="radio" name="grant" value="user" /> ${keep(approval.agent_id)}&rsquo;s ${action}
      for ${keep(approval.user)}</label
    >
    <label
      ><input type="radio" name="grant" value="any_user" /> ${keep(approval.agent_id)}&rsquo;s
      ${action} for any user</label
    >
    <label
      >for
      <select name="grant_seconds">
        ${lengths.map(
          (seconds) => html`<option value="${String(seconds)}">${duration(seconds)}</option>`,
        )}
      </select></label
    >
  </fieldset>`;
}

/**
 * The grant a posted form asks for: none, one, or `invalid` when the fields make no sense (the
 * page offers nothing else, so such a form was not sent by it).
 */
export function grantFromForm(form: Record<string, unknown>): GrantRequest | null | 'invalid' {
  const choice = form.grant;
  if (choice === undefined || choice === '') return null;
  if (choice !== 'user' && choice !== 'any_user') return 'invalid';
  const raw = form.grant_seconds;
  const seconds = typeof raw === 'string' && /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(seconds) ? { for: choice, seconds } : 'invalid';
}

/** The sentence of the decided page that says what was granted. */
export function grantMadeLine(approval: ApprovalView): Html | null {
  const { grant } = approval;
  if (!grant) return null;
  return html`<p class="close">
    Until ${utcTime(grant.expires_at)}, ${keep(grant.agent_id)}&rsquo;s
    <code>${grant.action}</code> calls for ${grant.user === null ? 'any user' : keep(grant.user)}
    run without asking (grant <code>${grant.id}</code>; an operator can revoke it sooner).
  </p>`;
}
