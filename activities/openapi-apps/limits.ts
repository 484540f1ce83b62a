/**
 * What an OpenAPI document may cost to import. A document is whatever its author wrote (or
 * whatever answers at the URL an operator gave), so everything the importer does is bounded, and
 * each refusal names the limit it hit. The values were chosen against GitHub's description
 * (`@octokit/openapi` 23.0.2, `api.github.com.json`): 13.0 MB of JSON, 1,223 operations, 811
 * paths, 10,460 `$ref`s, nested 20 levels; GHEC's is 14.1 MB with 1,471 operations.
 */
export const IMPORT_LIMITS = {
  /** The document's text (JSON or YAML), in bytes: GitHub's is 13.0 MB, GHEC's 14.1 MB. */
  documentBytes: 32 * 1024 * 1024,
  /**
   * How deep the document's JSON may nest: GitHub's nests 20 levels. Checked on the text before
   * parsing, so nothing recursive ever meets a deeper one.
   */
  documentDepth: 128,
  /** Path × method pairs in the document (before any allow-list): GitHub has 1,223, GHEC 1,471. */
  operations: 2_000,
  /** YAML aliases (`*name`): each may stand for a whole subtree (YAML's own billion laughs). */
  yamlAliases: 100,
  /**
   * References expanded inside one another (a schema's `$ref` to a schema with a `$ref`, …), and
   * `$ref`s followed in a row to reach a parameter or request body: real documents go a few deep.
   */
  referenceDepth: 32,
  /**
   * Schema nodes (objects and arrays) one action's input schema holds with its references
   * expanded, counted as it is built: GitHub's largest holds 346 (`repos/create-org-ruleset`). A
   * billion laughs of `$ref`s (each schema naming the next twice) reaches it after about 15
   * levels, having built no more than this. Past it the operation is skipped, as past the
   * other per-action limits (schemaDepth, schemaBytes, referenceDepth); the limits of the whole
   * import refuse the document.
   */
  schemaNodes: 20_000,
  /**
   * Schema nodes of every action's input schema together, as built: GitHub's 1,222 actions hold
   * about 17,000. Bounds a document of many operations, each just under the per-action budget
   * (2,000 of them would be 40 million).
   */
  importNodes: 2_000_000,
  /** One action's input schema as JSON, as built (references inlined, cycles kept as `$defs`). */
  schemaBytes: 512 * 1024,
  /** How deep one action's input schema may nest, as built (the MCP tool limit). */
  schemaDepth: 64,
  /** Every imported action together, as JSON: what a snapshot would keep. */
  importBytes: 32 * 1024 * 1024,
  /** An action's summary, in characters; longer is cut (ending with "…"). */
  summaryChars: 300,
  /** An action's description, in characters; longer is cut (ending with "…"). */
  descriptionChars: 4_000,
  /** Compiling one action's input schema with ajv (what checks an agent's input later). */
  schemaCompileMs: 1_000,
  /**
   * The whole import, in wall-clock time, in its worker thread: terminated past it. GitHub's
   * takes a few seconds on a loaded 2-core machine.
   */
  importMs: 60_000,
  /** The import worker's V8 heap (old generation): GitHub's import peaks far below it. */
  importHeapMb: 1_024,
} as const;

export type ImportLimit =
  | 'document_bytes'
  | 'document_depth'
  | 'operations'
  | 'yaml_aliases'
  | 'reference_depth'
  | 'schema_nodes'
  | 'import_nodes'
  | 'schema_bytes'
  | 'schema_depth'
  | 'import_bytes'
  | 'import_time'
  | 'import_memory';

/** Which input of an import the refusal is about (the API names it as the field). */
export type ImportField = 'document' | 'base_url' | 'grade_overrides' | 'operation_allowlist';

/**
 * Why a document cannot be imported. The API maps it to 400 `invalid_request` naming `field`;
 * `limit` is the bound it went past, or null when the document is malformed or unsupported
 * rather than too costly. The message is for the operator: it names what and where.
 */
export class OpenApiImportError extends Error {
  override name = 'OpenApiImportError';
  constructor(
    message: string,
    readonly field: ImportField = 'document',
    readonly limit: ImportLimit | null = null,
  ) {
    super(message);
  }
}

/** A refusal for going past a limit, its value in the message. */
export function overLimit(limit: ImportLimit, message: string): OpenApiImportError {
  return new OpenApiImportError(message, 'document', limit);
}

/** Text from the document as a message may quote it: cut, since it may be anything. */
export function quoted(text: string, max = 80): string {
  const chars = Array.from(text);
  const cut = chars.slice(0, max).join('');
  return JSON.stringify(chars.length > max ? `${cut}…` : cut);
}

/** Text cut to `max` characters (whole code points), ending with "…" when cut. */
export function bounded(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}
