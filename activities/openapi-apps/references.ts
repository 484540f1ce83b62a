import { IMPORT_LIMITS, quoted, type ImportLimit } from './limits.js';

/**
 * Why one operation cannot be imported (an external reference, a cookie parameter it requires,
 * a body only as multipart, an input schema past a per-action limit, …): the operation is left
 * out and listed as skipped with this reason (and the limit, where it is one), while the rest of
 * the document imports. A limit of the whole import refuses the document (OpenApiImportError).
 */
export class OperationProblem extends Error {
  override name = 'OperationProblem';
  constructor(
    message: string,
    /** The per-action limit the operation goes past, if that is why. */
    readonly limit: ImportLimit | null = null,
  ) {
    super(message);
  }
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member of a parsed document: own keys only (`__proto__`, `constructor` are just names). */
export function member(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** The tokens of a JSON pointer in a URI fragment (`#/components/schemas/a~1b` → `a/b`). */
function pointerTokens(ref: string): string[] {
  const fragment = ref.slice(1);
  if (fragment === '') return [];
  if (!fragment.startsWith('/')) {
    throw new OperationProblem(
      `it uses the reference ${quoted(ref)}, an anchor, which Gatehouse does not resolve (only JSON pointers within the document, "#/…")`,
    );
  }
  return fragment
    .slice(1)
    .split('/')
    .map((token) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(token);
      } catch {
        throw new OperationProblem(`it uses the malformed reference ${quoted(ref)}`);
      }
      return decoded.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

/**
 * The document's internal references (`#/…`), resolved on demand: nothing is dereferenced ahead,
 * so a document whose references would expand without end costs only what an import asks of it.
 * A reference to another document (a file, a URL) is never fetched: the operation using it is
 * skipped, saying so.
 */
export class DocumentReferences {
  readonly #root: unknown;

  constructor(root: unknown) {
    this.#root = root;
  }

  /** The value an internal reference points at. */
  target(ref: string): unknown {
    if (!ref.startsWith('#')) {
      throw new OperationProblem(
        `it references ${quoted(ref)} in another document, which Gatehouse does not fetch (only references within the document, "#/…")`,
      );
    }
    let value = this.#root;
    for (const token of pointerTokens(ref)) {
      if (Array.isArray(value) && /^(0|[1-9][0-9]*)$/.test(token)) value = value[Number(token)];
      else if (isObject(value)) value = member(value, token);
      else value = undefined;
      if (value === undefined) {
        throw new OperationProblem(
          `it references ${quoted(ref)}, which the document does not hold`,
        );
      }
    }
    return value;
  }

  /**
   * A value with its `$ref`s followed (a Reference Object to a parameter, a request body, a
   * security scheme), `$ref` after `$ref`, at most IMPORT_LIMITS.referenceDepth of them.
   */
  follow(value: unknown, what: string): unknown {
    let current = value;
    for (let hops = 0; isObject(current) && typeof member(current, '$ref') === 'string'; hops++) {
      if (hops === IMPORT_LIMITS.referenceDepth) {
        throw new OperationProblem(
          `${what} is reached through more than ${String(IMPORT_LIMITS.referenceDepth)} references in a row (or a cycle of them)`,
          'reference_depth',
        );
      }
      current = this.target(member(current, '$ref') as string);
    }
    return current;
  }
}
