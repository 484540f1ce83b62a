import { z } from 'zod';

/** Every timestamp the API answers is an ISO 8601 UTC string, or null where there is none yet. */
export const timestamp = z.iso.datetime();
export const optionalTimestamp = z.iso.datetime().nullable();

export function iso(value: Date): string;
export function iso(value: Date | null): string | null;
export function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
