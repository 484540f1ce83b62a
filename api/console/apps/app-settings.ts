import { html, type Html } from '../../connect/pages/html.js';

/**
 * An app's allow-list and grade overrides as the facts of its console page, for remote MCP apps
 * (tools) and OpenAPI apps (operations) alike.
 */
export function renderAppSettings(settings: {
  /** `tool`, `operation`. */
  noun: string;
  allowlist: readonly string[] | null;
  gradeOverrides: Readonly<Record<string, string>>;
}): Html {
  const overrides = Object.entries(settings.gradeOverrides);
  return html`<dt>${settings.noun === 'tool' ? 'Tool' : 'Operation'} allow-list</dt>
    <dd>
      ${settings.allowlist === null ? `every ${settings.noun}` : settings.allowlist.join(', ')}
    </dd>
    <dt>Grade overrides</dt>
    <dd>
      ${
        overrides.length === 0
          ? 'none'
          : overrides.map(([name, grade]) => `${name} → ${grade}`).join(', ')
      }
    </dd>`;
}
