/**
 * The import itself, synchronous and side-effect free: a document's text in, its actions out.
 * It runs in the import worker thread (import-thread.ts), never on the API's event loop; tests
 * may call it directly. Every cost is bounded (limits.ts): a document past a limit of the whole
 * import is refused, naming the limit; an operation Gatehouse cannot send, or whose input schema
 * goes past a limit of one action, is skipped, saying why (and naming that limit).
 */
import { SchemaUnusable, validatorOf } from '../mcp-apps/schema-compiler.js';
import type { CallScope } from '../../workflows/catalog/types.js';
import { assignNames } from './action-names.js';
import { baseUrlOf, type BaseUrl } from './base-url.js';
import type {
  ImportRequest,
  OpenApiImport,
  OperationDescriptor,
  OperationMethod,
  SkippedOperation,
} from './descriptors.js';
import { readDocument } from './document-text.js';
import { inputSchemaOf } from './input-schema.js';
import {
  bounded,
  IMPORT_LIMITS,
  OpenApiImportError,
  overLimit,
  quoted,
  type ImportLimit,
} from './limits.js';
import { isCallScope, operationGrade } from './operation-grades.js';
import { bodyOf, parametersOf, templatePlaceholders } from './operation-parts.js';
import {
  DocumentReferences,
  isObject,
  member,
  OperationProblem,
  type JsonObject,
} from './references.js';
import { SchemaBuilder, type SchemaDialect } from './schemas.js';
import { authSchemesOf, securityOf, unservableBecause } from './security-schemes.js';
import { swaggerAsOpenApi } from './swagger2.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const SENT: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

interface Found {
  path: string;
  method: string;
  operationId: string | null;
  pathItem: JsonObject;
  operation: JsonObject;
}

/** The specification and schema dialect, with a Swagger 2.0 document read as OpenAPI 3.0. */
function versioned(raw: JsonObject): {
  document: JsonObject;
  specification: string;
  dialect: SchemaDialect;
} {
  const openapi = member(raw, 'openapi');
  if (typeof openapi === 'string') {
    if (/^3\.0\.\d+$/.test(openapi))
      return { document: raw, specification: openapi, dialect: 'oas30' };
    if (/^3\.1\.\d+$/.test(openapi))
      return { document: raw, specification: openapi, dialect: 'oas31' };
    throw new OpenApiImportError(
      `the document is OpenAPI ${quoted(openapi, 20)}: Gatehouse imports OpenAPI 3.0, 3.1 and Swagger 2.0`,
    );
  }
  if (member(raw, 'swagger') === '2.0') {
    return { document: swaggerAsOpenApi(raw), specification: '2.0', dialect: 'oas30' };
  }
  throw new OpenApiImportError(
    'the document is not an OpenAPI document: it has neither "openapi" (3.0, 3.1) nor "swagger": "2.0"',
  );
}

/** Every path × method of the document, within the operation limit. */
function operationsOf(document: JsonObject, refs: DocumentReferences): Found[] {
  const paths = member(document, 'paths');
  if (paths === undefined) return [];
  if (!isObject(paths)) throw new OpenApiImportError('the document\'s "paths" is not an object');
  const found: Found[] = [];
  for (const [path, declared] of Object.entries(paths)) {
    if (path.startsWith('x-')) continue;
    let pathItem: unknown;
    try {
      pathItem = refs.follow(declared, `the path ${quoted(path)}`);
    } catch (error) {
      if (!(error instanceof OperationProblem)) throw error;
      throw new OpenApiImportError(
        `the path ${quoted(path)} cannot be read: ${error.message}`,
        'document',
        error.limit,
      );
    }
    if (!isObject(pathItem)) {
      throw new OpenApiImportError(`the path ${quoted(path)} is not a path item object`);
    }
    for (const method of METHODS) {
      const operation = member(pathItem, method);
      if (operation === undefined) continue;
      if (found.length === IMPORT_LIMITS.operations) {
        throw overLimit(
          'operations',
          `the document has more than ${String(IMPORT_LIMITS.operations)} operations`,
        );
      }
      const id = isObject(operation) ? member(operation, 'operationId') : undefined;
      found.push({
        path,
        method: method.toUpperCase(),
        operationId: typeof id === 'string' && id !== '' ? id : null,
        pathItem,
        operation: isObject(operation) ? operation : {},
      });
    }
  }
  return found;
}

function text(value: unknown, max: number): string | null {
  return typeof value === 'string' && value.trim() !== '' ? bounded(value.trim(), max) : null;
}

function checkedOverrides(
  overrides: Readonly<Record<string, CallScope>> | undefined,
): Readonly<Record<string, CallScope>> {
  const given = overrides ?? {};
  for (const [name, grade] of Object.entries(given)) {
    if (!isCallScope(grade)) {
      throw new OpenApiImportError(
        `the grade override for ${quoted(name)} is ${quoted(String(grade), 20)}, not read, write or destructive`,
        'grade_overrides',
      );
    }
  }
  return given;
}

/** The servers an operation declares for itself (its own, else its path item's), if any. */
function ownServers(found: Found): unknown[] | null {
  for (const level of [found.operation, found.pathItem]) {
    const servers = member(level, 'servers');
    if (Array.isArray(servers) && servers.length > 0) return servers as unknown[];
  }
  return null;
}

/** The URL of a list of servers as the base URL would be taken from it, or null if none. */
function serverUrlOf(servers: unknown[], documentUrl: string | null): string | null {
  try {
    return baseUrlOf(servers, { override: null, documentUrl }).url;
  } catch (error) {
    if (error instanceof OpenApiImportError) return null;
    throw error;
  }
}

/**
 * The document's servers; where it has none at the top but every operation that declares some
 * names the same one (Twilio's descriptions do, per path), that one.
 */
function documentServers(document: JsonObject, found: readonly Found[]): unknown {
  const servers = member(document, 'servers');
  if (Array.isArray(servers) && servers.length > 0) return servers;
  const own = found.map(ownServers).filter((list) => list !== null);
  const first = own[0];
  if (!first) return servers;
  const key = (list: unknown[]) => JSON.stringify(list[0]);
  return own.every((list) => key(list) === key(first)) ? first : servers;
}

interface Context {
  /** Schema nodes built by the whole import so far. */
  budget: { nodes: number };
  baseUrl: BaseUrl;
  documentUrl: string | null;
  document: JsonObject;
  refs: DocumentReferences;
  dialect: SchemaDialect;
  auth: OpenApiImport['auth'];
  overrides: Readonly<Record<string, CallScope>>;
  credentialHeaders: ReadonlySet<string>;
  credentialQuery: ReadonlySet<string>;
}

/** One operation as an action, or an OperationProblem saying why it cannot be one. */
function descriptorOf(found: Found, name: string, context: Context): OperationDescriptor {
  const method = found.method as OperationMethod;
  const { operation, pathItem } = found;
  if (context.baseUrl.source !== 'override') {
    const own = ownServers(found);
    const url = own && serverUrlOf(own, context.documentUrl);
    if (own && url !== context.baseUrl.url) {
      throw new OperationProblem(
        `it declares a server of its own${url ? ` (${quoted(url)})` : ''}, not the app's base URL: every action of an app goes to the one base URL`,
      );
    }
  }
  const { grade, source } = operationGrade(name, method, operation, context.overrides);
  const placeholders = templatePlaceholders(found.path);
  const schemas = new SchemaBuilder(context.refs, context.dialect, context.budget);
  const { parameters, ignored } = parametersOf(pathItem, operation, placeholders, {
    refs: context.refs,
    schemas,
    credentialHeaders: context.credentialHeaders,
    credentialQuery: context.credentialQuery,
  });
  const { body, ignored: bodyIgnored } = bodyOf(operation, context.refs, schemas);
  const summary = text(member(operation, 'summary'), IMPORT_LIMITS.summaryChars);
  const security = securityOf(operation, context.document);
  const inputSchema = inputSchemaOf(parameters, body, schemas.defs(), summary);
  const bytes = Buffer.byteLength(JSON.stringify(inputSchema));
  if (bytes > IMPORT_LIMITS.schemaBytes) {
    throw new OperationProblem(
      `its input schema is ${String(bytes)} bytes as JSON, more than ${String(IMPORT_LIMITS.schemaBytes)}`,
      'schema_bytes',
    );
  }
  return {
    name,
    operationId: found.operationId,
    method,
    path: found.path,
    grade,
    gradeSource: source,
    summary,
    description: text(member(operation, 'description'), IMPORT_LIMITS.descriptionChars),
    deprecated: member(operation, 'deprecated') === true,
    parameters,
    body,
    bodyIgnored,
    ignoredParameters: ignored,
    security,
    unservable: unservableBecause(security, context.auth),
    inputSchema,
  };
}

/** Why ajv cannot compile the input schema within its budget, or null when it can. */
function compileProblem(schema: Record<string, unknown>): string | null {
  try {
    validatorOf(schema, IMPORT_LIMITS.schemaCompileMs);
    return null;
  } catch (error) {
    if (!(error instanceof SchemaUnusable)) throw error;
    return `its input schema cannot check input: ${error.message}`;
  }
}

/** Imports a document (see the module's comment). Throws OpenApiImportError when it cannot. */
export function importDocument(request: ImportRequest): OpenApiImport {
  const overrides = checkedOverrides(request.gradeOverrides);
  const allowlist = request.allowlist ?? null;
  if (allowlist !== null && !allowlist.every((name) => typeof name === 'string')) {
    throw new OpenApiImportError(
      'the allow-list holds something other than action names',
      'operation_allowlist',
    );
  }
  const { document, specification, dialect } = versioned(readDocument(request.document));
  const refs = new DocumentReferences(document);
  const documentUrl = request.documentUrl ?? null;
  const all = operationsOf(document, refs);
  const baseUrl = baseUrlOf(documentServers(document, all), {
    override: request.baseUrl ?? null,
    documentUrl,
  });
  const auth = authSchemesOf(member(document, 'components'), refs, documentUrl);
  const keys = Object.values(auth).filter((scheme) => scheme.kind === 'api_key');
  const context: Context = {
    budget: { nodes: 0 },
    baseUrl,
    documentUrl,
    document,
    refs,
    dialect,
    auth,
    overrides,
    credentialHeaders: new Set(
      keys.filter((key) => key.in === 'header').map((key) => key.name.toLowerCase()),
    ),
    credentialQuery: new Set(keys.filter((key) => key.in === 'query').map((key) => key.name)),
  };

  const skipped: SkippedOperation[] = [];
  const sendable = all.filter((found) => {
    if (SENT.has(found.method)) return true;
    skipped.push({
      method: found.method,
      path: found.path,
      operationId: found.operationId,
      name: null,
      limit: null,
      reason:
        found.method === 'HEAD'
          ? 'HEAD answers no body, and actions send GET, POST, PUT, PATCH or DELETE'
          : `${found.method} is not a method actions send (GET, POST, PUT, PATCH, DELETE)`,
    });
    return false;
  });
  const { names, collisions } = assignNames(sendable);
  const operations: OperationDescriptor[] = [];
  let total = 0;
  for (const found of sendable) {
    const name = names.get(found) ?? '';
    if (allowlist !== null && !allowlist.includes(name)) continue;
    const skip = (reason: string, limit: ImportLimit | null = null) => {
      skipped.push({
        method: found.method,
        path: found.path,
        operationId: found.operationId,
        name,
        reason,
        limit,
      });
    };
    let descriptor: OperationDescriptor;
    try {
      descriptor = descriptorOf(found, name, context);
    } catch (error) {
      if (!(error instanceof OperationProblem)) throw error;
      skip(error.message, error.limit);
      continue;
    }
    const problem = compileProblem(descriptor.inputSchema);
    if (problem) {
      skip(problem);
      continue;
    }
    total += Buffer.byteLength(JSON.stringify(descriptor));
    if (total > IMPORT_LIMITS.importBytes) {
      throw overLimit(
        'import_bytes',
        `the imported actions take more than ${String(IMPORT_LIMITS.importBytes)} bytes as JSON`,
      );
    }
    operations.push(descriptor);
  }
  const named = new Set(names.values());
  const info = member(document, 'info');
  return {
    specification,
    title: isObject(info) ? text(member(info, 'title'), 200) : null,
    version: isObject(info) ? text(member(info, 'version'), 100) : null,
    baseUrl,
    operations: operations.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    skipped,
    collisions,
    auth,
    unmatched: {
      allowlist: (allowlist ?? []).filter((name) => !named.has(name)),
      gradeOverrides: Object.keys(overrides).filter((name) => !named.has(name)),
    },
  };
}
