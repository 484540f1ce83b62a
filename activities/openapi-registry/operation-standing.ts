/**
 * Whether an operation of an OpenAPI app may be called now, by the pinning rule (as
 * tool-standing.ts is for remote MCP tools): an operation is trusted as of the snapshot an
 * operator accepted, so it is callable only when it is in that snapshot, inside the allow-list,
 * unchanged in the newest import, and servable by how the app's users connect
 * (connection-scheme.ts): it needs no credential, or the app's scheme is one of its alternatives.
 */
import type { CallScope } from '../../workflows/catalog/index.js';
import {
  changedFields,
  type OperationDescriptor,
  type OperationGradeSource,
} from '../openapi-apps/index.js';
import type { OpenApiAppStanding } from '../db/openapi-apps.js';
import {
  connectionOf,
  needsNoCredential,
  servedByScheme,
  type OpenApiConnection,
} from './connection-scheme.js';

/**
 * Whether a call sends the user's credential: `required` (the operation needs it: the user must
 * be connected), `optional` (the operation may be called anonymously but also takes the app's
 * scheme: sent when the user is connected), `none` (never sent).
 */
export type CredentialUse = 'required' | 'optional' | 'none';

export type OperationStanding =
  | {
      callable: true;
      accepted: true;
      descriptor: OperationDescriptor;
      grade: CallScope;
      gradeSource: OperationGradeSource;
      credential: CredentialUse;
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
 * Whether a call to the operation sends the user's credential, or why it cannot be served by how
 * the app's users connect. An operation that names a security requirement is sent with a
 * credential or not at all: sent without, it would only be refused, or worse, served as anonymous.
 */
export function credentialUseOf(
  appId: string,
  descriptor: OperationDescriptor,
  connection: OpenApiConnection,
): { use: CredentialUse } | { refusal: string } {
  const scheme =
    connection.kind === 'credential' || connection.kind === 'oauth2' ? connection.schemeName : null;
  const served = scheme !== null && servedByScheme(descriptor, scheme);
  if (needsNoCredential(descriptor)) return { use: served ? 'optional' : 'none' };
  if (served) return { use: 'required' };
  const subject = `operation "${descriptor.name}" of app "${appId}" needs a credential`;
  if (descriptor.unservable !== null) return { refusal: `${subject}: ${descriptor.unservable}` };
  const wanted = descriptor.security
    .map((alternative) => alternative.schemes.map((one) => one.scheme).join(' and '))
    .join(' or ');
  if (connection.kind === 'unservable') {
    return {
      refusal: `${subject} (${wanted}), and the scheme its users connect with cannot be served: ${connection.reason}`,
    };
  }
  return {
    refusal: `${subject} of ${wanted}, while the app's users connect with ${scheme === null ? 'none' : `"${scheme}"`}; an operator may choose another scheme (auth_scheme)`,
  };
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
  const credential = credentialUseOf(app.id, acceptedOne, connectionOf(app, accepted));
  if ('refusal' in credential) return refuse(credential.refusal);
  return {
    callable: true,
    accepted: true,
    descriptor: acceptedOne,
    grade,
    gradeSource: source,
    credential: credential.use,
  };
}

/** The operations an app's callers can use now: the accepted snapshot's callable ones, by name. */
export function callableOperations(standing: OpenApiAppStanding): OperationStanding[] {
  return (standing.accepted?.descriptors ?? []).flatMap((descriptor) => {
    const judged = operationStanding(standing, descriptor.name);
    return judged?.callable ? [judged] : [];
  });
}
