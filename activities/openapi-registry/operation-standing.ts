/**
 * Whether an operation of an OpenAPI app may be called now, by the pinning rule (as
 * tool-standing.ts is for remote MCP tools): an operation is trusted as of the snapshot an
 * operator accepted, so it is callable only when it is in that snapshot, inside the allow-list,
 * unchanged in the newest import, and servable without a credential (the credential kind for
 * API keys, bearer and basic is not there yet: such an operation says so).
 */
import type { CallScope } from '../../workflows/catalog/index.js';
import {
  changedFields,
  type OperationDescriptor,
  type OperationGradeSource,
} from '../openapi-apps/index.js';
import type { OpenApiAppStanding } from '../db/openapi-apps.js';

export type OperationStanding =
  | {
      callable: true;
      accepted: true;
      descriptor: OperationDescriptor;
      grade: CallScope;
      gradeSource: OperationGradeSource;
    }
  | {
      callable: false;
      /** Whether `descriptor` is the accepted definition (false: only the newest import has it). */
      accepted: boolean;
      descriptor: OperationDescriptor;
      grade: CallScope;
      gradeSource: OperationGradeSource;
      reason: string;
    };

/** The operator's override, else the grade the import gave (the document's or the method's). */
export function operationGradeOf(
  descriptor: OperationDescriptor,
  overrides: Readonly<Record<string, CallScope>>,
): { grade: CallScope; source: OperationGradeSource } {
  const override = Object.hasOwn(overrides, descriptor.name)
    ? overrides[descriptor.name]
    : undefined;
  return override
    ? { grade: override, source: 'override' }
    : { grade: descriptor.grade, source: descriptor.gradeSource };
}

/**
 * Why an operation cannot be called whatever is accepted: it needs a credential. A document
 * whose operation names a security requirement gets it sent with one; until users can connect
 * such an app, no call is sent without it (it would only be refused, or worse, served as
 * anonymous).
 */
export function credentialRefusal(appId: string, descriptor: OperationDescriptor): string | null {
  const needsNone =
    descriptor.security.length === 0 || descriptor.security.some((alt) => alt.schemes.length === 0);
  if (needsNone) return null;
  return `operation "${descriptor.name}" of app "${appId}" needs a credential (${descriptor.unservable ?? 'its security requirement'}); connecting users to an OpenAPI app with API keys, bearer tokens or basic credentials is not available yet`;
}

/**
 * The standing of `name` in the app, or null when neither the accepted snapshot nor the newest
 * import has such an operation. Every refusal names the change, which an operator ends by
 * accepting a snapshot that has the operation as it is now.
 */
export function operationStanding(
  standing: OpenApiAppStanding,
  name: string,
): OperationStanding | null {
  const { app, accepted, latest } = standing;
  const acceptedOne = accepted?.descriptors.find((one) => one.name === name);
  const pending = latest && latest.version !== accepted?.version ? latest : null;
  const listedOne = pending ? pending.descriptors.find((one) => one.name === name) : acceptedOne;
  const descriptor = acceptedOne ?? listedOne;
  if (!descriptor) return null;
  const { grade, source } = operationGradeOf(descriptor, app.gradeOverrides);
  const refuse = (reason: string): OperationStanding => ({
    callable: false,
    accepted: acceptedOne !== undefined,
    descriptor,
    grade,
    gradeSource: source,
    reason,
  });
  const subject = `operation "${name}" of app "${app.id}"`;
  if (app.operationAllowlist !== null && !app.operationAllowlist.includes(name)) {
    return refuse(`${subject} is outside the app's operation allow-list`);
  }
  if (!acceptedOne) {
    return refuse(
      accepted === null
        ? `${subject} is in snapshot v${String(pending?.version)}, which no operator has accepted yet (the app has no accepted snapshot)`
        : `${subject} is new in snapshot v${String(pending?.version)}, not in the accepted snapshot v${String(accepted.version)}; an operator must accept a snapshot that has it`,
    );
  }
  if (pending && accepted) {
    const before = accepted.operations.find((one) => one.name === name);
    const after = pending.operations.find((one) => one.name === name);
    if (!after) {
      return refuse(
        `${subject} was removed from the document in snapshot v${String(pending.version)}; the accepted snapshot v${String(accepted.version)} still has it, until an operator accepts a newer one`,
      );
    }
    const fields = before ? changedFields(before, after) : [];
    if (fields.length > 0) {
      return refuse(
        `${subject} changed its ${fields.join(', ')} in snapshot v${String(pending.version)} since the accepted snapshot v${String(accepted.version)}; an operator must accept snapshot v${String(pending.version)} before it can be called`,
      );
    }
  }
  const credential = credentialRefusal(app.id, acceptedOne);
  if (credential) return refuse(credential);
  return { callable: true, accepted: true, descriptor: acceptedOne, grade, gradeSource: source };
}

/** The operations an app's callers can use now: the accepted snapshot's callable ones, by name. */
export function callableOperations(standing: OpenApiAppStanding): OperationStanding[] {
  return (standing.accepted?.descriptors ?? []).flatMap((descriptor) => {
    const judged = operationStanding(standing, descriptor.name);
    return judged?.callable ? [judged] : [];
  });
}
