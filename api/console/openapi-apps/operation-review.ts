import type { Html } from '../../connect/pages/html.js';
import { renderDefinitionReview, type ReviewField } from '../pages/definition-review.js';
import { prettyJson } from '../pages/line-diff.js';
import type { OpenApiSnapshotReview, OperationSide } from './snapshot-review.js';

const SOURCE_WORDS: Record<OperationSide['source'], string> = {
  override: 'your override',
  extension: 'the document’s x-gatehouse-scope',
  method: 'its method',
};

/**
 * The governed parts of an operation, as snapshot.ts pins them: where a call goes (method, path),
 * what it sends (parameters, body), what credential it takes (security), what an agent reads
 * (summary, description) and how policy judges it (grade).
 */
const FIELDS: ReviewField<OperationSide>[] = [
  {
    key: 'grade',
    label: 'Grade',
    long: false,
    text: (side) => `${side.grade}, from ${SOURCE_WORDS[side.source]}`,
  },
  { key: 'method', label: 'Method', long: false, text: (side) => side.operation.method },
  { key: 'path', label: 'Path', long: false, text: (side) => side.operation.path },
  {
    key: 'summary',
    label: 'Summary',
    long: false,
    text: (side) => side.operation.summary ?? '(none)',
  },
  {
    key: 'description',
    label: 'Description',
    long: false,
    text: (side) => side.operation.description ?? '(none)',
  },
  {
    key: 'parameters',
    label: 'Parameters',
    long: true,
    text: (side) => prettyJson(side.operation.parameters),
  },
  {
    key: 'body',
    label: 'Request body',
    long: true,
    text: (side) => prettyJson(side.operation.body),
  },
  {
    key: 'security',
    label: 'Security',
    long: true,
    text: (side) => prettyJson(side.operation.security),
  },
];

export function renderOperationReview(
  review: OpenApiSnapshotReview['operations'][number],
  versions: { accepted: number | null; pending: number },
): Html {
  return renderDefinitionReview(
    review,
    FIELDS,
    {
      noun: 'operation',
      removed: 'removed from the document',
      gone: 'the document no longer has it',
    },
    versions,
  );
}
