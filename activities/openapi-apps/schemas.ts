import { IMPORT_LIMITS, overLimit, quoted } from './limits.js';
import {
  isObject,
  member,
  OperationProblem,
  type DocumentReferences,
  type JsonObject,
} from './references.js';

/**
 * An operation's schemas (its parameters', its request body's) as one self-contained JSON Schema
 * 2020-12, which ajv compiles and an agent reads without the document:
 *
 * - References are expanded in place, within a budget counted as the copy is made: at most
 *   IMPORT_LIMITS.schemaNodes objects and arrays for the whole action, references at most
 *   IMPORT_LIMITS.referenceDepth deep, nesting at most IMPORT_LIMITS.schemaDepth. A billion
 *   laughs of `$ref`s stops at the budget, having built no more than it; nothing is expanded
 *   ahead of need.
 * - A reference to a schema that is being expanded already (a cycle: a tree node whose children
 *   are tree nodes) is not expanded again: it becomes `{"$ref": "#/$defs/<name>"}`, and the
 *   schema is kept once under the action's `$defs`, where ajv follows it as it validates.
 * - OpenAPI 3.0's (and Swagger 2.0's) schema keywords become JSON Schema's: `nullable` becomes a
 *   `"null"` type, boolean `exclusiveMinimum`/`exclusiveMaximum` become numbers (also in documents
 *   that say 3.1: real ones still use them). In 3.0 a
 *   `$ref` replaces its object (its siblings are ignored, as the specification says); in 3.1
 *   the siblings apply too (`allOf`).
 * - What only describes (vendor extensions, `xml`, `externalDocs`, `discriminator`) is dropped;
 *   `$id`, `$anchor` and `$schema` inside are dropped too (they would re-base references that are
 *   expanded already). `$dynamicRef` and `$recursiveRef` are refused: the operation is skipped.
 * - A property marked `readOnly` is not required of a request (the specification: it is not
 *   sent), so it leaves `required`.
 */

export type SchemaDialect = 'oas30' | 'oas31';

/** Keywords whose value is one schema. */
const ONE_SCHEMA = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
]);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Kept out of the built schema: descriptive only, or would re-base the expanded references. */
const DROPPED = new Set([
  'xml',
  'externalDocs',
  'discriminator',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$schema',
  '$comment',
  '$defs',
  'definitions',
  '$vocabulary',
]);

/** The state of one action's schemas: its budget, and the cycles kept as `$defs`. */
export class SchemaBuilder {
  #nodes = 0;
  /** Each cyclic reference's name under `$defs`. */
  readonly #defNames = new Map<string, string>();
  readonly #defs = new Map<string, unknown>();

  constructor(
    private readonly refs: DocumentReferences,
    private readonly dialect: SchemaDialect,
    /** What the whole import has built so far, against IMPORT_LIMITS.importNodes. */
    private readonly budget: { nodes: number },
  ) {}

  /** A schema of the document, built (see above). */
  build(schema: unknown): unknown {
    return this.#schema(schema, [], 0);
  }

  /** The cycles' schemas, to go under the action's input schema's `$defs` (empty if none). */
  defs(): JsonObject {
    // Each def is built from its own reference, which may find further cycles: until none is new.
    for (let built = 0; built < this.#defNames.size;) {
      const pending = [...this.#defNames].filter(([ref]) => !this.#defs.has(ref));
      for (const [ref] of pending) {
        this.#defs.set(ref, this.#schema(this.refs.target(ref), [ref], 1));
        built++;
      }
    }
    return Object.fromEntries(
      [...this.#defNames].map(([ref, name]) => [name, this.#defs.get(ref)]),
    );
  }

  #count(): void {
    if (++this.#nodes > IMPORT_LIMITS.schemaNodes) {
      throw new OperationProblem(
        `its input schema would hold more than ${String(IMPORT_LIMITS.schemaNodes)} schema nodes with its references expanded`,
        'schema_nodes',
      );
    }
    if (++this.budget.nodes > IMPORT_LIMITS.importNodes) {
      throw overLimit(
        'import_nodes',
        `the input schemas of the operations would hold more than ${String(IMPORT_LIMITS.importNodes)} schema nodes in all with their references expanded`,
      );
    }
  }

  #deeper(depth: number): number {
    if (depth + 1 > IMPORT_LIMITS.schemaDepth) {
      throw new OperationProblem(
        `its input schema nests deeper than ${String(IMPORT_LIMITS.schemaDepth)} levels with its references expanded`,
        'schema_depth',
      );
    }
    return depth + 1;
  }

  /** A copy of a plain JSON value (an enum, a default, an example), counted. */
  #value(value: unknown, depth: number): unknown {
    if (typeof value !== 'object' || value === null) return value;
    this.#count();
    const next = this.#deeper(depth);
    if (Array.isArray(value)) return value.map((item) => this.#value(item, next));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, this.#value(item, next)]),
    );
  }

  #defName(ref: string): string {
    const known = this.#defNames.get(ref);
    if (known) return known;
    const last = ref.split('/').pop() ?? 'schema';
    const base = last.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60) || 'schema';
    const taken = new Set(this.#defNames.values());
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${String(n)}`;
    this.#defNames.set(ref, name);
    return name;
  }

  #schema(schema: unknown, expanding: readonly string[], depth: number): unknown {
    if (typeof schema === 'boolean') return schema;
    if (!isObject(schema)) {
      throw new OperationProblem('it has a schema that is not an object');
    }
    this.#count();
    const ref = member(schema, '$ref');
    if (typeof ref === 'string') return this.#reference(schema, ref, expanding, depth);
    for (const refused of ['$dynamicRef', '$recursiveRef']) {
      if (Object.hasOwn(schema, refused)) {
        throw new OperationProblem(
          `it uses ${refused} in a schema, which Gatehouse does not resolve`,
        );
      }
    }
    const next = this.#deeper(depth);
    const built: [string, unknown][] = [];
    for (const [key, value] of Object.entries(schema)) {
      if (DROPPED.has(key) || key.startsWith('x-')) continue;
      if (ONE_SCHEMA.has(key) || (key === 'items' && !Array.isArray(value))) {
        built.push([key, this.#schema(value, expanding, next)]);
      } else if (SCHEMA_LIST.has(key) || key === 'items') {
        if (!Array.isArray(value)) {
          throw new OperationProblem(`it has a schema whose "${key}" is not a list`);
        }
        this.#count();
        const listDepth = this.#deeper(next);
        // Draft-04's list `items` (Swagger 2.0 never has it; 3.0 forbids it) is 2020-12's prefixItems.
        built.push([
          key === 'items' ? 'prefixItems' : key,
          value.map((item) => this.#schema(item, expanding, listDepth)),
        ]);
      } else if (SCHEMA_MAP.has(key)) {
        if (!isObject(value)) {
          throw new OperationProblem(`it has a schema whose "${key}" is not an object`);
        }
        this.#count();
        const mapDepth = this.#deeper(next);
        built.push([
          key,
          Object.fromEntries(
            Object.entries(value).map(([name, item]) => [
              name,
              this.#schema(item, expanding, mapDepth),
            ]),
          ),
        ]);
      } else {
        built.push([key, this.#value(value, next)]);
      }
    }
    return this.#dialected(Object.fromEntries(built));
  }

  #reference(
    schema: JsonObject,
    ref: string,
    expanding: readonly string[],
    depth: number,
  ): unknown {
    const siblings = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$ref'));
    let target: unknown;
    if (expanding.includes(ref)) {
      target = { $ref: `#/$defs/${this.#defName(ref)}` };
    } else {
      if (expanding.length >= IMPORT_LIMITS.referenceDepth) {
        throw new OperationProblem(
          `its input schema expands references more than ${String(IMPORT_LIMITS.referenceDepth)} deep (at ${quoted(ref)})`,
          'reference_depth',
        );
      }
      target = this.#schema(this.refs.target(ref), [...expanding, ref], depth);
    }
    // 3.0: a Reference Object is replaced by what it references, its siblings ignored.
    if (this.dialect === 'oas30' || Object.keys(siblings).length === 0) return target;
    const rest = this.#schema(siblings, expanding, depth);
    if (!isObject(rest)) return target;
    const allOf = Array.isArray(rest.allOf) ? (rest.allOf as unknown[]) : [];
    return { ...rest, allOf: [...allOf, target] };
  }

  /** 3.0's keywords as 2020-12's, and `required` without the read-only properties. */
  #dialected(schema: JsonObject): JsonObject {
    let out = schema;
    const properties = member(out, 'properties');
    const required = member(out, 'required');
    if (isObject(properties) && Array.isArray(required)) {
      const kept = required.filter((name) => {
        const property = typeof name === 'string' ? member(properties, name) : undefined;
        return !(isObject(property) && property.readOnly === true);
      });
      if (kept.length !== required.length) out = { ...out, required: kept };
    }
    // 3.0's keywords in any dialect: documents that say 3.1 use them too, and ajv refuses a
    // `nullable` without a `type`; in 2020-12 a boolean bound is no bound at all.
    for (const [bound, limit] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      const flag = member(out, bound);
      if (typeof flag !== 'boolean') continue;
      const value = member(out, limit);
      const dropped: string[] = flag && typeof value === 'number' ? [bound, limit] : [bound];
      out = Object.fromEntries(Object.entries(out).filter(([key]) => !dropped.includes(key)));
      if (flag && typeof value === 'number') out = { ...out, [bound]: value };
    }
    if (!Object.hasOwn(out, 'nullable')) return out;
    const { nullable, ...rest } = out;
    if (nullable !== true) return rest;
    const type = member(rest, 'type');
    if (typeof type === 'string') {
      const withNull: JsonObject = { ...rest, type: [type, 'null'] };
      const values = member(rest, 'enum');
      if (Array.isArray(values) && !values.includes(null)) {
        withNull.enum = [...(values as unknown[]), null];
      }
      return withNull;
    }
    if (type === undefined && Object.keys(rest).length > 0) {
      return { anyOf: [{ type: 'null' }, rest] };
    }
    return rest;
  }
}
