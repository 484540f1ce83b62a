import type { StoredPolicy } from '../../../activities/db/policies.js';
import { present, replacePolicyBody } from '../../routes/policies.js';
import { prettyJson } from '../pages/line-diff.js';

/**
 * A stored version as the body `PUT /v1/policies/{id}` takes, pretty-printed: what the edit form
 * starts from, what a version's page shows, and the left side of "what you changed". Read from
 * the API's own presentation of it (so settings added to policies later appear here without a
 * change), then through the PUT schema, so its keys come in the order a parsed candidate's do
 * and only real edits show as changes. A version the schema no longer takes is shown as stored.
 */
export function editableJson(policy: StoredPolicy): string {
  const shown = present(policy);
  const body = {
    name: shown.name,
    agents: shown.agents,
    defaults: shown.defaults,
    rules: shown.rules,
    approval: shown.approval,
  };
  const parsed = replacePolicyBody.safeParse(body);
  return prettyJson(parsed.success ? parsed.data : body);
}
