import { z } from 'zod';

/**
 * Ids in management paths are UUIDs of versions 1–8, or the all-zero or all-f UUID. zod's
 * `uuid()` accepts exactly these; the pattern is spelled out so the OpenAPI documents say so
 * too (the generator would only write `format: uuid`).
 */
export const UUID_PATTERN =
  '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$';

export const uuidString = () => z.uuid().meta({ pattern: UUID_PATTERN });
