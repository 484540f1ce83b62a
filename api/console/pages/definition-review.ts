import { html, type Html } from '../../connect/pages/html.js';
import { lineDiff, renderDiffSide } from './line-diff.js';

/** One governed field of a definition (a tool's, an operation's), as a review shows it. */
export interface ReviewField<D> {
  key: string;
  label: string;
  /** Shown as a block of lines (schemas, JSON), not one line. */
  long: boolean;
  text: (definition: D) => string;
}

/** A definition a pending snapshot adds, changes or removes, both sides of it. */
export interface DefinitionReview<D> {
  name: string;
  kind: 'added' | 'changed' | 'removed';
  /** The keys of the fields that differ (a changed definition only). */
  changed: ReadonlySet<string>;
  /** The accepted snapshot's side; null when added. */
  before: D | null;
  /** The pending snapshot's side; null when removed. */
  after: D | null;
}

/** What the review calls the thing and its source, in its sentences. */
export interface ReviewWords {
  /** `tool`, `operation`. */
  noun: string;
  /** Why it is gone: `removed by the server`, `removed from the document`. */
  removed: string;
  /** Said of a removed one: `the server no longer lists it`. */
  gone: string;
}

/**
 * One definition of a pending snapshot, as the person accepting it reviews it. A changed one
 * shows each changed field side by side (accepted | pending) with its lines marked `−`/`+`, the
 * fields that stayed the same folded away; a new one shows what accepting it lets agents call, a
 * removed one what they could call until now. The grade is a field like the others.
 */
export function renderDefinitionReview<D>(
  review: DefinitionReview<D>,
  fields: readonly ReviewField<D>[],
  words: ReviewWords,
  versions: { accepted: number | null; pending: number },
): Html {
  const acceptedLabel =
    versions.accepted === null ? 'Accepted (none)' : `Accepted v${String(versions.accepted)}`;
  const pendingLabel = `Pending v${String(versions.pending)}`;
  const { before, after } = review;
  const changedNames = fields
    .filter((view) => review.changed.has(view.key))
    .map((view) => view.label);

  const single = (view: ReviewField<D>, side: D) => {
    const text = view.text(side);
    return html`<div class="field">
      <h4>${view.label}</h4>
      ${view.long ? html`<pre>${text}</pre>` : html`<p class="line">${text}</p>`}
    </div>`;
  };

  const sideBySide = (view: ReviewField<D>, old: D, now: D) => {
    const oldText = view.text(old);
    const newText = view.text(now);
    if (!review.changed.has(view.key)) {
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

  const shown = fields.map((view) => {
    if (before && after) return sideBySide(view, before, after);
    const only = after ?? before;
    return only ? single(view, only) : '';
  });
  const kindWords =
    review.kind === 'added'
      ? `new ${words.noun}`
      : review.kind === 'changed'
        ? 'changed'
        : words.removed;

  return html`<section class="panel tool-review" aria-labelledby="review-${review.name}">
    <h3 id="review-${review.name}">
      <code>${review.name}</code>
      <span class="badge ${review.kind === 'removed' ? '' : 'bad'}">${kindWords}</span>
    </h3>
    <p class="muted">
      ${
        review.kind === 'changed'
          ? `Changed: ${changedNames.join(', ').toLowerCase()}. Calls to it are refused until a snapshot with it as it is now is accepted.`
          : review.kind === 'added'
            ? `Only in ${pendingLabel.toLowerCase()}: accepting it lets agents call this ${words.noun}, at this grade.`
            : `Only in the ${acceptedLabel.toLowerCase()} snapshot: ${words.gone}, and accepting makes it uncallable.`
      }
    </p>
    ${shown}
  </section>`;
}
