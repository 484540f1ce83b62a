import type { Connection } from '@temporalio/client';
// The proto package is CommonJS without static export names, so take its default export.
import proto from '@temporalio/proto';
import { searchAttributes } from '../../workflows/search-attributes.js';

/**
 * Registers the call workflows' search attributes, by which an operator filters calls in the
 * Temporal UI, when the namespace lacks them. The dev server's `--search-attribute` flag is
 * ignored once its database file exists, so an upgraded local stack (and a fresh cluster
 * namespace) gets new attributes here. Returns the names added.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes));
  const missing = Object.values(searchAttributes)
    .map((key) => key.name)
    .filter((name) => !known.has(name));
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((name) => [
        name,
        proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return missing;
}
