import type { McpToolDefinition } from '../../../workflows/catalog/mcp-tools.js';
import type { Html } from '../../connect/pages/html.js';
import { renderDefinitionReview, type ReviewField } from '../pages/definition-review.js';
import { prettyJson } from '../pages/line-diff.js';
import type { ToolReview, ToolSide } from './snapshot-review.js';

const SOURCE_WORDS: Record<ToolSide['source'], string> = {
  override: 'your override',
  annotations: 'the server’s annotations',
  default: 'the default (no hints)',
};

export function gradeInWords(side: Pick<ToolSide, 'grade' | 'source'>): string {
  return `${side.grade}, from ${SOURCE_WORDS[side.source]}`;
}

const tool = (side: ToolSide): McpToolDefinition => side.definition;

const FIELDS: ReviewField<ToolSide>[] = [
  { key: 'grade', label: 'Grade', long: false, text: gradeInWords },
  { key: 'title', label: 'Title', long: false, text: (side) => tool(side).title ?? '(none)' },
  {
    key: 'description',
    label: 'Description',
    long: false,
    text: (side) => tool(side).description ?? '(none)',
  },
  {
    key: 'input_schema',
    label: 'Input schema',
    long: true,
    text: (side) => prettyJson(tool(side).inputSchema),
  },
  {
    key: 'annotations',
    label: 'Annotations',
    long: true,
    text: (side) => prettyJson(tool(side).annotations ?? {}),
  },
];

/**
 * One tool of a pending snapshot, as the person accepting it reviews it: a changed annotation can
 * move a tool from destructive to read, so the grade is compared as a field of its own.
 */
export function renderToolReview(
  review: ToolReview,
  versions: { accepted: number | null; pending: number },
): Html {
  const { before, after } = review;
  const gradeChanged =
    before !== null &&
    after !== null &&
    (before.grade !== after.grade || before.source !== after.source);
  return renderDefinitionReview(
    {
      name: review.name,
      kind: review.kind,
      changed: new Set<string>([...review.fields, ...(gradeChanged ? ['grade'] : [])]),
      before,
      after,
    },
    FIELDS,
    { noun: 'tool', removed: 'removed by the server', gone: 'the server no longer lists it' },
    versions,
  );
}
