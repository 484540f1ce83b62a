/**
 * OpenAPI documents imported as governed apps: the importer's public face (README.md beside this
 * file has the design). No database and no HTTP here: storage, the management API, calls and
 * connections are built on these.
 */
export { importOpenApi } from './import-thread.js';
export { importDocument } from './import-document.js';
export { IMPORT_LIMITS, OpenApiImportError, type ImportField, type ImportLimit } from './limits.js';
export type * from './descriptors.js';
export { ACTION_NAME, ACTION_NAME_MAX, normalizedName } from './action-names.js';
export { methodGrade, SCOPE_EXTENSION } from './operation-grades.js';
export { buildRequest, RequestBuildError, type OpenApiRequest } from './request-builder.js';
export { unservableBecause } from './security-schemes.js';
export {
  canonicalJson,
  changedFields,
  hasOperationChanges,
  operationChanges,
  operationChangesInWords,
  pinnedOperation,
  snapshotDigest,
  snapshotOf,
  type OperationChanges,
  type OperationField,
  type PinnedOperation,
} from './snapshot.js';
