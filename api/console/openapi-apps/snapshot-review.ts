import type {
  OpenApiAppStanding,
  OpenApiAppSnapshot,
} from '../../../activities/db/openapi-apps.js';
import {
  changedFields,
  type OperationChanges,
  type OperationGradeSource,
  type PinnedOperation,
} from '../../../activities/openapi-apps/index.js';
import { gradedByDocument } from '../../../activities/openapi-registry/registry.js';
import { operationGradeOf } from '../../../activities/openapi-registry/operation-standing.js';
import type { CallScope } from '../../../workflows/catalog/index.js';
import type { DefinitionReview } from '../pages/definition-review.js';
import { presentOpenApiApp } from '../../presenters/openapi-apps.js';

/** An operation as one snapshot pins it, with the grade it is governed at from that snapshot. */
export interface OperationSide {
  operation: PinnedOperation;
  grade: CallScope;
  source: OperationGradeSource;
}

export interface OpenApiSnapshotReview {
  version: number;
  fetchedAt: string;
  acceptedVersion: number | null;
  changes: OperationChanges;
  operations: DefinitionReview<OperationSide>[];
  /**
   * Operations the snapshot adds or regrades whose grade only the document's `x-gatehouse-scope`
   * gives (`name (grade)`): accepting takes the document author's word for them.
   */
  hinted: string[];
}

function sidesOf(
  snapshot: OpenApiAppSnapshot | null,
  overrides: Readonly<Record<string, CallScope>>,
): Map<string, OperationSide> {
  const descriptors = new Map((snapshot?.descriptors ?? []).map((one) => [one.name, one]));
  return new Map(
    (snapshot?.operations ?? []).flatMap((operation) => {
      const descriptor = descriptors.get(operation.name);
      if (!descriptor) return [];
      return [[operation.name, { operation, ...operationGradeOf(descriptor, overrides) }]];
    }),
  );
}

/**
 * What the person accepting an OpenAPI app's snapshot must see: each operation it adds, changes
 * or removes, the accepted and pending definitions and grades side by side. The pending snapshot
 * is the one the management API shows (`snapshot.pending`). Null when nothing is pending.
 */
export function openApiSnapshotReview(standing: OpenApiAppStanding): OpenApiSnapshotReview | null {
  const pending = presentOpenApiApp(standing).snapshot.pending;
  const { latest, accepted, app } = standing;
  if (!pending || !latest || latest.version !== pending.version) return null;
  const before = sidesOf(accepted, app.gradeOverrides);
  const after = sidesOf(latest, app.gradeOverrides);
  const review = (
    name: string,
    kind: DefinitionReview<OperationSide>['kind'],
  ): DefinitionReview<OperationSide> => {
    const old = kind === 'added' ? undefined : before.get(name);
    const now = kind === 'removed' ? undefined : after.get(name);
    const fields = old && now ? changedFields(old.operation, now.operation) : [];
    const regraded = old && now && (old.grade !== now.grade || old.source !== now.source);
    return {
      name,
      kind,
      changed: new Set<string>([...fields, ...(regraded ? ['grade'] : [])]),
      before: old ?? null,
      after: now ?? null,
    };
  };
  const { added, changed, removed } = pending.changes;
  const operations = [
    ...changed.map(({ operation }) => review(operation, 'changed')),
    ...added.map((name) => review(name, 'added')),
    ...removed.map((name) => review(name, 'removed')),
  ];
  const fresh = new Set(
    operations
      .filter((one) => one.kind === 'added' || one.changed.has('grade'))
      .map((one) => one.name),
  );
  return {
    version: pending.version,
    fetchedAt: pending.fetched_at,
    acceptedVersion: app.acceptedVersion,
    changes: pending.changes,
    operations,
    hinted: gradedByDocument(
      latest.descriptors.filter((one) => fresh.has(one.name)),
      app,
    ),
  };
}
