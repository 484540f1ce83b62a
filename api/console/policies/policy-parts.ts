import { duration } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { present } from '../../routes/policies.js';

/** A policy version as the API presents it. */
export type ShownPolicy = ReturnType<typeof present>;

const RULE_MATCH = ['action', 'app', 'scope'] as const;
const RULE_SHOWN = new Set<string>([...RULE_MATCH, 'when', 'decision']);

/** The policy's defaults, one per grade. */
export function renderDefaults(policy: ShownPolicy): Html {
  return html`<dl class="facts">
    ${(['read', 'write', 'destructive'] as const).map(
      (scope) =>
        html`<dt>${scope}</dt>
          <dd>${policy.defaults[scope]}</dd>`,
    )}
  </dl>`;
}

/**
 * The rules in the order written, each with what it matches, its condition and decision; any
 * other setting a rule carries (its own approval settings) is shown as written.
 */
export function renderRules(policy: ShownPolicy): Html {
  if (policy.rules.length === 0) {
    return html`<p class="none">No rules: the defaults decide every call.</p>`;
  }
  return html`<table class="list">
    <thead>
      <tr>
        <th scope="col">#</th>
        <th scope="col">Matches</th>
        <th scope="col">Condition</th>
        <th scope="col">Decision</th>
        <th scope="col">Other settings</th>
      </tr>
    </thead>
    <tbody>
      ${policy.rules.map((rule, index) => {
        const fields: Record<string, unknown> = { ...rule };
        const matches = RULE_MATCH.filter((key) => fields[key] !== undefined).map(
          (key) => `${key} ${String(fields[key])}`,
        );
        const others = Object.entries(fields).filter(([key]) => !RULE_SHOWN.has(key));
        return html`<tr>
          <td data-label="#">${String(index)}</td>
          <td data-label="Matches">${matches.join(', ')}</td>
          <td data-label="Condition">
            ${rule.when === undefined ? html`<span class="muted">always</span>` : html`<code>${rule.when}</code>`}
          </td>
          <td data-label="Decision"><strong>${rule.decision}</strong></td>
          <td data-label="Other settings">
            ${
              others.length === 0
                ? html`<span class="muted">none</span>`
                : others.map(
                    ([key, value]) =>
                      html`<div><code>${key}: ${JSON.stringify(value)}</code></div>`,
                  )
            }
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

/** The approval settings in the order a person asks about them. */
const APPROVAL_ORDER = ['requested_from', 'quorum', 'ttl_seconds', 'max_grant_seconds'];

/** Who decides held calls and how: each setting in words, any newer one as written. */
export function renderApproval(policy: ShownPolicy): Html {
  const approval = policy.approval as Record<string, unknown>;
  const words = (key: string, value: unknown): [string, string] => {
    if (key === 'requested_from' && Array.isArray(value)) {
      return [
        'Who decides',
        value.length === 0 ? 'anyone allowed to decide (never the agent)' : value.join(', '),
      ];
    }
    if (key === 'ttl_seconds' && typeof value === 'number') {
      return ['An approval waits', duration(value)];
    }
    if (key === 'quorum' && typeof value === 'number') {
      return ['Approvals needed', String(value)];
    }
    if (key === 'max_grant_seconds' && typeof value === 'number') {
      return ['Longest grant', value === 0 ? 'no grants' : duration(value)];
    }
    return [key, JSON.stringify(value)];
  };
  const order = (key: string) => {
    const index = APPROVAL_ORDER.indexOf(key);
    return index === -1 ? APPROVAL_ORDER.length : index;
  };
  const entries = Object.entries(approval).sort(([a], [b]) => order(a) - order(b));
  return html`<dl class="facts">
    ${entries.map(([key, value]) => {
      const [label, text] = words(key, value);
      return html`<dt>${label}</dt>
        <dd>${text}</dd>`;
    })}
  </dl>`;
}
