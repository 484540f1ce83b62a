import type { ActionCall } from '../../workflows/call-types.js';
import type { OpenApiAppStanding } from '../db/openapi-apps.js';
import { operationInputCheck } from './operation-input.js';
import { operationStanding, type CredentialUse } from './operation-standing.js';

export type OperationPinning = { refusal: string } | { refusal: null; credential: CredentialUse };

/**
 * Why a call to an operation of an OpenAPI app may not run as the operator accepted it, or, when
 * it may, whether it sends the user's credential. Checked where every call is prepared (activities/calls/prepare-call.ts), so it
 * holds both when a call is made and when a held call runs after its approval: the app must
 * still be registered, the operation callable (operation-standing.ts: accepted, unchanged since,
 * inside the allow-list, needing no credential), graded as when the call was made, and the input
 * must fit the accepted descriptor (its schema, and a request built from it).
 */
export async function operationPinning(
  standing: OpenApiAppStanding | null,
  target: ActionCall,
): Promise<OperationPinning> {
  const refusal = (text: string): OperationPinning => ({ refusal: text });
  const name = target.action.slice(target.app.length + 1);
  if (!standing) {
    return refusal(
      `app "${target.app}" is not registered in this environment (any more): its operations cannot be called`,
    );
  }
  const judged = operationStanding(standing, name);
  if (!judged) {
    return refusal(`operation "${name}" of app "${target.app}" is in no snapshot of the app`);
  }
  if (!judged.callable) return refusal(judged.reason);
  if (judged.grade !== target.scope) {
    return refusal(
      `operation "${name}" of app "${target.app}" is graded ${judged.grade} now, not ${target.scope} as when the call was made; make the call again`,
    );
  }
  const checked = await operationInputCheck(judged.descriptor, target.input);
  if (checked.ok) return { refusal: null, credential: judged.credential };
  if ('unusable' in checked) {
    return refusal(
      `the accepted input schema of operation "${name}" cannot check input: ${checked.unusable}`,
    );
  }
  const [first] = checked.issues;
  return refusal(
    `the input no longer fits the accepted definition of operation "${name}" (${first?.path ?? 'input'}: ${first?.message ?? 'invalid'}); make the call again`,
  );
}
