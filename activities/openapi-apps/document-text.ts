import { parse as parseYaml } from 'yaml';
import { textNestsDeeperThan, valueNestsDeeperThan } from '../../infra/json-nesting.js';
import { IMPORT_LIMITS, OpenApiImportError, overLimit } from './limits.js';

/**
 * An OpenAPI document's text, read into plain JSON values within the import's limits: the size
 * first (before any parsing), then the nesting, then the syntax. JSON is read by JSON.parse;
 * anything else as YAML 1.2 (the `yaml` package, core schema: no custom tags, no merge keys,
 * duplicate keys refused), with at most IMPORT_LIMITS.yamlAliases aliases, since each alias may
 * stand for a whole subtree. The value returned holds no shared subtrees (a YAML alias is a copy
 * in it), so every later walk sees a tree of the size that was checked.
 */

const MIB = 1024 * 1024;

function sizeInWords(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

/** The document's text: bytes must be UTF-8 (a BOM is dropped). */
export function documentText(document: string | Uint8Array): string {
  const bytes = typeof document === 'string' ? Buffer.byteLength(document) : document.byteLength;
  if (bytes > IMPORT_LIMITS.documentBytes) {
    throw overLimit(
      'document_bytes',
      `the document is ${sizeInWords(bytes)}, more than the ${sizeInWords(IMPORT_LIMITS.documentBytes)} an OpenAPI document may be`,
    );
  }
  let text: string;
  if (typeof document === 'string') text = document;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(document);
    } catch {
      throw new OpenApiImportError('the document is not UTF-8 text');
    }
  }
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

function tooDeep(): OpenApiImportError {
  return overLimit(
    'document_depth',
    `the document nests deeper than ${String(IMPORT_LIMITS.documentDepth)} levels`,
  );
}

function readJson(text: string): unknown {
  if (textNestsDeeperThan(text, IMPORT_LIMITS.documentDepth)) throw tooDeep();
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const why = error instanceof Error ? error.message : 'unreadable';
    throw new OpenApiImportError(`the document is not valid JSON: ${why.slice(0, 200)}`);
  }
}

function readYaml(text: string): unknown {
  let value: unknown;
  try {
    value = parseYaml(text, {
      maxAliasCount: IMPORT_LIMITS.yamlAliases,
      prettyErrors: true,
      uniqueKeys: true,
      merge: false,
    }) as unknown;
  } catch (error) {
    const why = error instanceof Error ? error.message : 'unreadable';
    // The composer recurses: text nested deep enough overflows its stack, which the parser
    // reports as a syntax error of its own.
    if (error instanceof RangeError || why.includes('Maximum call stack size exceeded')) {
      throw tooDeep();
    }
    if (/alias/i.test(why) && /excessive|resource exhaustion/i.test(why)) {
      throw overLimit(
        'yaml_aliases',
        `the document's YAML aliases expand more than ${String(IMPORT_LIMITS.yamlAliases)} times`,
      );
    }
    throw new OpenApiImportError(
      `the document is neither JSON nor valid YAML: ${why.split('\n')[0]?.slice(0, 200) ?? ''}`,
    );
  }
  if (valueNestsDeeperThan(value, IMPORT_LIMITS.documentDepth)) throw tooDeep();
  // Aliases come back as shared objects; as JSON they are copies, within the size checked here.
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined) throw new OpenApiImportError('the document is empty');
  if (Buffer.byteLength(json) > IMPORT_LIMITS.documentBytes) {
    throw overLimit(
      'yaml_aliases',
      `the document's YAML aliases expand it past ${sizeInWords(IMPORT_LIMITS.documentBytes)}`,
    );
  }
  return JSON.parse(json) as unknown;
}

/**
 * The document as plain JSON values: an object, or an OpenApiImportError saying why not.
 * JSON is recognised by its first character (`{`); any other text is read as YAML.
 */
export function readDocument(document: string | Uint8Array): Record<string, unknown> {
  const text = documentText(document);
  const trimmed = text.trimStart();
  const value = trimmed.startsWith('{') ? readJson(text) : readYaml(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OpenApiImportError('the document is not an object (an OpenAPI document is one)');
  }
  return value as Record<string, unknown>;
}
