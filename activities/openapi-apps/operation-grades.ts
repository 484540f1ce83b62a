import type { CallScope } from '../../workflows/catalog/types.js';
import type { OperationGradeSource, OperationMethod } from './descriptors.js';
import { quoted } from './limits.js';
import { member, OperationProblem, type JsonObject } from './references.js';

/** The extension a document may grade an operation with: `x-gatehouse-scope: read`. */
export const SCOPE_EXTENSION = 'x-gatehouse-scope';

const SCOPES: readonly CallScope[] = ['read', 'write', 'destructive'];

export function isCallScope(value: unknown): value is CallScope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** The proxy's rule: what the method alone says of an endpoint. */
export function methodGrade(method: OperationMethod): CallScope {
  if (method === 'GET') return 'read';
  return method === 'DELETE' ? 'destructive' : 'write';
}

/**
 * An action's grade and where it came from: the operator's override by action name, else the
 * operation's `x-gatehouse-scope` (read, write or destructive; anything else makes the operation
 * unimportable, saying so, unless an override grades it), else its method.
 */
export function operationGrade(
  name: string,
  method: OperationMethod,
  operation: JsonObject,
  overrides: Readonly<Record<string, CallScope>>,
): { grade: CallScope; source: OperationGradeSource } {
  const override = Object.hasOwn(overrides, name) ? overrides[name] : undefined;
  if (override) return { grade: override, source: 'override' };
  const extension = member(operation, SCOPE_EXTENSION);
  if (extension !== undefined) {
    if (!isCallScope(extension)) {
      throw new OperationProblem(
        `its ${SCOPE_EXTENSION} is ${typeof extension === 'string' ? quoted(extension, 40) : quoted(JSON.stringify(extension), 40)}, not read, write or destructive`,
      );
    }
    return { grade: extension, source: 'extension' };
  }
  return { grade: methodGrade(method), source: 'method' };
}
