import type { ToolField } from '../../../workflows/catalog/mcp-tool-changes.js';
import type { McpToolDefinition } from '../../../workflows/catalog/mcp-tools.js';
import { html, type Html } from '../../connect/pages/html.js';
import { lineDiff, prettyJson, renderDiffSide } from '../pages/line-diff.js';
import type { ToolReview, ToolSide } from './snapshot-review.js';

const SOURCE_WORDS: Record<ToolSide['source'], string> = {
  override: 'your override',
  annotations: 'the server’s annotations',
  default: 'the default (no hints)',
};

export function gradeInWords(side: Pick<ToolSide, 'grade' | 'source'>): string {
  return `${side.grade}, from ${SOURCE_WORDS[side.source]}`;
}

interface FieldView {
  field: ToolField | 'grade';
  label: string;
  /** The field as one side shows it. */
  text: (definition: McpToolDefinition, side: ToolSide) => string;
}

const FIELDS: FieldView[] = [
  { field: 'grade', label: 'Grade', text: (_tool, side) => gradeInWords(side) },
  { field: 'title', label: 'Title', text: (tool) => tool.title ?? '(none)' },
  { field: 'description', label: 'Description', text: (tool) => tool.description ?? '(none)' },
  { field: 'input_schema', label: 'Input schema', text: (tool) => prettyJson(tool.inputSchema) },
  {
    field: 'annotations',
    label: 'Annotations',
    text: (tool) => prettyJson(tool.annotations ?? {}),
  },
];

const KIND_WORDS: Record<ToolReview['kind'], string> = {
  added: 'new tool',
  changed: 'changed',
  removed: 'removed by the server',
};

/**
 * One tool of a pending snapshot, as the person accepting it reviews it. A changed tool shows
 * each changed field side by side (accepted | pending) with its lines marked `−`/`+`, the
 * fields that stayed the same folded away; a new tool shows what accepting it lets agents call,
 * a removed one what they could call until now. The grade is a field like the others: a changed
 * annotation can move a tool from destructive to read.
 */
export function renderToolReview(
  review: ToolReview,
  versions: { accepted: number | null; pending: number },
): Html {
  const acceptedLabel =
    versions.accepted === null ? 'Accepted (none)' : `Accepted v${String(versions.accepted)}`;
  const pendingLabel = `Pending v${String(versions.pending)}`;
  const { before, after } = review;
  const gradeChanged =
    before !== null &&
    after !== null &&
    (before.grade !== after.grade || before.source !== after.source);
  const differs = (field: FieldView['field']) =>
    field === 'grade' ? gradeChanged : review.fields.includes(field);
  const changedNames = FIELDS.filter((view) => differs(view.field)).map((view) => view.label);

  const single = (view: FieldView, side: ToolSide) => {
    const text = view.text(side.definition, side);
    const long = view.field === 'input_schema' || view.field === 'annotations';
    return html`<div class="field">
      <h4>${view.label}</h4>
      ${long ? html`<pre>${text}</pre>` : html`<p class="line">${text}</p>`}
    </div>`;
  };

  const sideBySide = (view: FieldView, old: ToolSide, now: ToolSide) => {
    const oldText = view.text(old.definition, old);
    const newText = view.text(now.definition, now);
    if (!differs(view.field)) {
      return html`<details class="field">
        <summary><strong>${view.label}</strong> <span class="badge">unchanged</span></summary>
        <pre>${newText}</pre>
      </details>`;
    }
    const diff = lineDiff(oldText, newText);
    return html`<div class="field">
      <h4>${view.label} <span class="badge bad">changed</span></h4>
      <div class="sbs">
        <div>
          <p class="side">${acceptedLabel}</p>
          ${renderDiffSide(diff.before, `${view.label}, ${acceptedLabel}`)}
        </div>
        <div>
          <p class="side">${pendingLabel}</p>
          ${renderDiffSide(diff.after, `${view.label}, ${pendingLabel}`)}
        </div>
      </div>
    </div>`;
  };

  const fields = FIELDS.map((view) => {
    if (before && after) return sideBySide(view, before, after);
    const only = after ?? before;
    return only ? single(view, only) : '';
  });

  return html`<section class="panel tool-review" aria-labelledby="review-${review.name}">
    <h3 id="review-${review.name}">
      <code>${review.name}</code>
      <span class="badge ${review.kind === 'removed' ? '' : 'bad'}"
        >${KIND_WORDS[review.kind]}</span
      >
    </h3>
    <p class="muted">
      ${
        review.kind === 'changed'
          ? `Changed: ${changedNames.join(', ').toLowerCase()}. Calls to it are refused until a snapshot with it as it is now is accepted.`
          : review.kind === 'added'
            ? `Only in ${pendingLabel.toLowerCase()}: accepting it lets agents call this tool, at this grade.`
            : `Only in the ${acceptedLabel.toLowerCase()} snapshot: the server no longer lists it, and accepting makes it uncallable.`
      }
    </p>
    ${fields}
  </section>`;
}
