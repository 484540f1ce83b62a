/**
 * What an operator accepts of an imported app, and what changed between two imports: the
 * pinning evidence, as tool-pinning does for remote MCP tools (workflows/catalog/mcp-tool-changes.ts
 * has the same shape: added, removed, changed with the fields). An action is trusted as the
 * snapshot accepted describes it: its method and path (where the call goes), its parameters and
 * body schema (what it sends), its grade (how policy judges it), its summary and description
 * (what an agent reads, which may steer it), and its security requirements with the definitions
 * of the schemes they name (what credential it is sent with, and where an OAuth token comes from:
 * a document that moves a token URL changes every operation that takes that scheme, so none is
 * sent with a token from the new place until an operator accepts it). A snapshot is canonical: actions sorted by name, parameters by location and
 * name, object keys sorted at every level, so the same operations always serialize to the same
 * bytes and the same digest, whatever order the document listed them in.
 */
import { createHash } from 'node:crypto';
import type { CallScope } from '../../workflows/catalog/types.js';
import type {
  AuthScheme,
  BodyDescriptor,
  OperationDescriptor,
  OperationMethod,
  ParameterDescriptor,
  SecurityAlternative,
} from './descriptors.js';

export interface PinnedOperation {
  name: string;
  method: OperationMethod;
  path: string;
  grade: CallScope;
  summary: string | null;
  description: string | null;
  parameters: Pick<ParameterDescriptor, 'name' | 'in' | 'required' | 'serialization' | 'schema'>[];
  body: BodyDescriptor | null;
  /**
   * The input schema's `$defs` (cyclic schemas) the parameters' and body's schemas refer to;
   * `{}` when none.
   */
  defs: Record<string, unknown>;
  security: SecurityAlternative[];
  /** The document's definitions of the schemes `security` names (a `security` change if changed). */
  schemes: Record<string, AuthScheme>;
}

/** The governed parts of an action; a change of any makes it a changed action. */
export type OperationField =
  'method' | 'path' | 'grade' | 'summary' | 'description' | 'parameters' | 'body' | 'security';

const FIELDS: readonly OperationField[] = [
  'method',
  'path',
  'grade',
  'summary',
  'description',
  'parameters',
  'body',
  'security',
];

/** Object keys sorted at every level; arrays keep their order. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, sortedKeys(item)]),
  );
}

/** The canonical JSON of any value: keys sorted at every level, no spaces. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value));
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function pinnedOperation(
  descriptor: OperationDescriptor,
  auth: Readonly<Record<string, AuthScheme>>,
): PinnedOperation {
  const defs = descriptor.inputSchema.$defs;
  const named = new Set(
    descriptor.security.flatMap((alternative) => alternative.schemes.map((one) => one.scheme)),
  );
  return {
    name: descriptor.name,
    method: descriptor.method,
    path: descriptor.path,
    grade: descriptor.grade,
    summary: descriptor.summary,
    description: descriptor.description,
    parameters: descriptor.parameters
      .map(({ name, in: where, required, serialization, schema }) => ({
        name,
        in: where,
        required,
        serialization,
        schema,
      }))
      .sort((a, b) => (a.in === b.in ? byName(a, b) : a.in < b.in ? -1 : 1)),
    body: descriptor.body,
    defs: typeof defs === 'object' && defs !== null ? (defs as Record<string, unknown>) : {},
    security: descriptor.security,
    schemes: Object.fromEntries(
      [...named].flatMap((name) => {
        const scheme = Object.hasOwn(auth, name) ? auth[name] : undefined;
        return scheme ? [[name, scheme]] : [];
      }),
    ),
  };
}

/**
 * The snapshot of an import's actions: canonical (see above), sorted by name. `auth`: the
 * document's security schemes, by name (`OpenApiImport.auth`).
 */
export function snapshotOf(
  operations: readonly OperationDescriptor[],
  auth: Readonly<Record<string, AuthScheme>>,
): PinnedOperation[] {
  return operations.map((operation) => pinnedOperation(operation, auth)).sort(byName);
}

/** The SHA-256 of a snapshot's canonical JSON, base64url: equal digests, equal snapshots. */
export function snapshotDigest(snapshot: readonly PinnedOperation[]): string {
  return createHash('sha256').update(canonicalJson(snapshot)).digest('base64url');
}

export interface OperationChanges {
  /** In the latest snapshot, not in the accepted one. */
  added: string[];
  /** In the accepted snapshot, not in the latest. */
  removed: string[];
  changed: { operation: string; fields: OperationField[] }[];
}

/** Which governed parts of an action differ between two snapshots of it. */
export function changedFields(before: PinnedOperation, after: PinnedOperation): OperationField[] {
  return FIELDS.filter((field) => {
    if (field === 'security') {
      const pinned = (one: PinnedOperation) =>
        canonicalJson({ security: one.security, schemes: one.schemes });
      return pinned(before) !== pinned(after);
    }
    if (field === 'parameters' || field === 'body') {
      // A cyclic schema lives in `defs`: a change there changes what refers to it.
      const [was, is] = [canonicalJson(before[field]), canonicalJson(after[field])];
      if (was !== is) return true;
      return (
        is.includes('"$ref":"#/$defs/') && canonicalJson(before.defs) !== canonicalJson(after.defs)
      );
    }
    return canonicalJson(before[field]) !== canonicalJson(after[field]);
  });
}

/** `accepted` null: nothing accepted yet, so every action is new. Each list sorted by name. */
export function operationChanges(
  accepted: readonly PinnedOperation[] | null,
  latest: readonly PinnedOperation[],
): OperationChanges {
  const before = new Map((accepted ?? []).map((operation) => [operation.name, operation]));
  const after = new Map(latest.map((operation) => [operation.name, operation]));
  const changes: OperationChanges = { added: [], removed: [], changed: [] };
  for (const operation of [...latest].sort(byName)) {
    const old = before.get(operation.name);
    if (!old) {
      changes.added.push(operation.name);
      continue;
    }
    const fields = changedFields(old, operation);
    if (fields.length > 0) changes.changed.push({ operation: operation.name, fields });
  }
  for (const operation of [...(accepted ?? [])].sort(byName)) {
    if (!after.has(operation.name)) changes.removed.push(operation.name);
  }
  return changes;
}

export function hasOperationChanges(changes: OperationChanges): boolean {
  return changes.added.length + changes.removed.length + changes.changed.length > 0;
}

/** One line for audit reasons and messages: `added a, b; removed c; changed d (path, grade)`. */
export function operationChangesInWords(changes: OperationChanges): string {
  const parts: string[] = [];
  if (changes.added.length > 0) parts.push(`added ${changes.added.join(', ')}`);
  if (changes.removed.length > 0) parts.push(`removed ${changes.removed.join(', ')}`);
  if (changes.changed.length > 0) {
    const each = changes.changed.map(
      ({ operation, fields }) => `${operation} (${fields.join(', ')})`,
    );
    parts.push(`changed ${each.join(', ')}`);
  }
  return parts.length > 0 ? parts.join('; ') : 'no changes';
}
