/**
 * What an imported OpenAPI document becomes: one descriptor per operation, the app's auth
 * schemes and base URL, and what was left out and why. Plain JSON values only, so an import
 * crosses a worker thread's boundary and can be stored as it is.
 */
import type { CallScope } from '../../workflows/catalog/types.js';
import type { BaseUrl } from './base-url.js';
import type { ImportLimit } from './limits.js';
import type { NameCollision } from './action-names.js';
import type { AuthScheme, SecurityAlternative } from './security-schemes.js';

export type { AuthScheme, SecurityAlternative } from './security-schemes.js';
export type { BaseUrl } from './base-url.js';
export type { NameCollision } from './action-names.js';

/** The methods an imported action sends: what an UpstreamRequest carries. */
export type OperationMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Where an action's grade came from: the operator's override, the document's own
 * `x-gatehouse-scope` on the operation (the document author's word, like an MCP server's
 * annotations), or the method (GET read; POST, PUT, PATCH write; DELETE destructive).
 */
export type OperationGradeSource = 'override' | 'extension' | 'method';

/**
 * How a parameter's value is written. `plain`: one value. For arrays: `comma` (`a,b`: form or
 * simple style without explode), `exploded` (the name repeated, `?id=a&id=b`: form with explode,
 * the query's default), `space` (`a b`) and `pipe` (`a|b`).
 */
export type ParameterSerialization = 'plain' | 'comma' | 'exploded' | 'space' | 'pipe';

export interface ParameterDescriptor {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  serialization: ParameterSerialization;
  /**
   * Its JSON Schema 2020-12, references expanded; one that refers to `#/$defs/…` means the
   * action's input schema's `$defs` (a cyclic schema).
   */
  schema: unknown;
  description: string | null;
}

export interface BodyDescriptor {
  /** `application/json`, or the `+json` media type the document declares (sent as Content-Type). */
  mediaType: string;
  required: boolean;
  /** As a parameter's schema. */
  schema: unknown;
}

/** A parameter the action does not take, and why (a cookie, `Authorization`, a credential's name). */
export interface IgnoredParameter {
  name: string;
  in: string;
  reason: string;
}

export interface OperationDescriptor {
  /** The action's name: `<app>.<name>` (action-names.ts). */
  name: string;
  /** The document's operationId, as written; null where it has none. */
  operationId: string | null;
  method: OperationMethod;
  /** The document's path template (`/repos/{owner}/{repo}/issues`), relative to the base URL. */
  path: string;
  grade: CallScope;
  gradeSource: OperationGradeSource;
  /** Bounded (IMPORT_LIMITS.summaryChars, descriptionChars). */
  summary: string | null;
  description: string | null;
  deprecated: boolean;
  parameters: ParameterDescriptor[];
  body: BodyDescriptor | null;
  /** Why a request body the document allows is not sent (a media type other than JSON), or null. */
  bodyIgnored: string | null;
  ignoredParameters: IgnoredParameter[];
  /** The operation's security requirements, as alternatives ([] when none is required). */
  security: SecurityAlternative[];
  /** Why no alternative can be served by one credential of a supported scheme, or null. */
  unservable: string | null;
  /**
   * The action's input, as one JSON Schema 2020-12 object: `{path, query, headers, body}`, each
   * present only when the operation takes it (README: "The input schema").
   */
  inputSchema: Record<string, unknown>;
}

/** An operation of the document that is not an action, and why. */
export interface SkippedOperation {
  method: string;
  path: string;
  operationId: string | null;
  /** The name it would have had, where it got that far. */
  name: string | null;
  reason: string;
  /**
   * The limit of one action its input schema goes past (`schema_nodes`, `schema_depth`,
   * `schema_bytes`, `reference_depth`), where that is why; null otherwise.
   */
  limit: ImportLimit | null;
}

export interface OpenApiImport {
  /** `2.0`, `3.0.x` or `3.1.x`, as the document says. */
  specification: string;
  title: string | null;
  /** The document's `info.version`. */
  version: string | null;
  baseUrl: BaseUrl;
  /** The actions, sorted by name. */
  operations: OperationDescriptor[];
  skipped: SkippedOperation[];
  collisions: NameCollision[];
  /** The document's security schemes by name, normalized (unsupported ones say why). */
  auth: Record<string, AuthScheme>;
  /** Names the operator gave (allow-list, grade overrides) that no operation has. */
  unmatched: { allowlist: string[]; gradeOverrides: string[] };
}

/** What an import is asked. */
export interface ImportRequest {
  /** The document's text (JSON or YAML), or its bytes (UTF-8). */
  document: string | Uint8Array;
  /** Where the document was fetched from: relative server URLs resolve against it. */
  documentUrl?: string | null;
  /** The operator's base URL, which wins over the document's servers. */
  baseUrl?: string | null;
  /** Only these actions (by name) are imported; null or absent: all. */
  allowlist?: readonly string[] | null;
  /** Grades by action name, over everything else. */
  gradeOverrides?: Readonly<Record<string, CallScope>>;
}
