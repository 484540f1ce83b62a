import { uuid4 } from '@temporalio/workflow';

/**
 * A UUIDv7 made deterministically in workflow code: the workflow clock's milliseconds, then the
 * random bits of the SDK's seeded `uuid4()`, so replay makes the same id. Request ids of calls
 * and audit events are UUIDv7 (time-ordered), and an id made here stays the same across an
 * activity's retries: the Update and the audit row it names are counted once.
 */
export function workflowUuidV7(): string {
  const random = uuid4();
  const ms = Date.now().toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${random.slice(15)}`;
}
