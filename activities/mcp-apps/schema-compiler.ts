import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isCpuBudgetSpent, withinCpuBudget } from '../../infra/cpu-budget.js';

/**
 * Remote MCP tools' JSON Schemas, compiled and run with ajv. Runs only in the schema
 * thread (schema-thread.ts): compiling is synchronous, and a schema a server chooses can take
 * seconds to compile (30 tools of ~62 KB held an API's event loop 12 s), so it is done where it
 * cannot stall anyone's event loop, each step under a budget that V8 enforces.
 *
 * Each dialect a tool may declare in `$schema` gets its own validator (their keywords differ:
 * draft-07's array `items` is 2020-12's `prefixItems`); none declared means 2020-12, MCP's
 * default. Schemas are checked against their meta-schema when compiled, so a malformed one is
 * refused at registration. `strict: false`: a server may use keywords ajv does not know
 * (annotations, vendor extensions), which JSON Schema says to ignore. Formats are annotations by
 * default in 2020-12 and are left to the server.
 */
const options = { strict: false, allErrors: true, validateFormats: false } as const;

const DIALECTS = {
  draft07: () => new Ajv(options),
  draft2019: () => new Ajv2019(options),
  draft2020: () => new Ajv2020(options),
};

type Dialect = keyof typeof DIALECTS;
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/**
 * One ajv per dialect, made when first needed and warmed outside any budget (its first compile
 * compiles the meta-schema, which is ours to pay for, not the tool's). Replaced after a compile
 * was stopped midway, which may leave its registries half-written.
 */
const made = new Map<Dialect, AnyAjv>();

function ajvOf(dialect: Dialect): AnyAjv {
  let ajv = made.get(dialect);
  if (!ajv) {
    ajv = DIALECTS[dialect]();
    ajv.compile({ type: 'object' });
    made.set(dialect, ajv);
  }
  return ajv;
}

function dialectOf(schema: Record<string, unknown>): Dialect | null {
  const declared = schema.$schema;
  if (declared === undefined) return 'draft2020';
  if (typeof declared !== 'string') return null;
  const uri = declared.replace(/^https?:/, '').replace(/#$/, '');
  switch (uri) {
    case '//json-schema.org/draft-07/schema':
      return 'draft07';
    case '//json-schema.org/draft/2019-09/schema':
      return 'draft2019';
    case '//json-schema.org/draft/2020-12/schema':
      return 'draft2020';
    default:
      return null;
  }
}

/** A schema that cannot check input; the message says why, for whoever reads the refusal. */
export class SchemaUnusable extends Error {
  override name = 'SchemaUnusable';
}

/**
 * Compiled validators by the SHA-256 of the schema's JSON: the schema accepted at registration
 * is the one calls check input against, so checking input does not compile it again.
 */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 512;

function keyOf(schema: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
}

/**
 * The validator of a tool's input schema, compiled within `budgetMs`; throws SchemaUnusable
 * saying why when it has none (the budget spent included).
 */
export function validatorOf(schema: Record<string, unknown>, budgetMs: number): ValidateFunction {
  const key = keyOf(schema);
  const known = compiled.get(key);
  if (known) return known;
  const dialect = dialectOf(schema);
  if (dialect === null) {
    throw new SchemaUnusable(
      `its $schema ${JSON.stringify(schema.$schema)} is not a JSON Schema dialect Gatehouse validates (draft-07, 2019-09, 2020-12)`,
    );
  }
  const ajv = ajvOf(dialect);
  let validate: ValidateFunction;
  try {
    validate = withinCpuBudget(() => ajv.compile(schema), budgetMs);
  } catch (error) {
    if (isCpuBudgetSpent(error)) {
      made.delete(dialect);
      throw new SchemaUnusable(`it took longer than ${String(budgetMs)} ms to compile`);
    }
    // ajv compiles each reference and subschema by recursion: a chain of them deep enough
    // overflows its stack, which says nothing to whoever reads the refusal.
    if (error instanceof RangeError) {
      throw new SchemaUnusable('its references or subschemas nest too deeply to compile');
    }
    throw new SchemaUnusable(error instanceof Error ? error.message : 'it cannot be compiled');
  } finally {
    // Compiling registers the schema's $id; the cache below is what keeps it, not ajv.
    made.get(dialect)?.removeSchema(schema);
  }
  // An `$async` schema's validator answers a promise, which would read as valid whatever the
  // input: such a schema is refused like a malformed one.
  if ((validate as { $async?: unknown }).$async === true) {
    throw new SchemaUnusable('it is an asynchronous schema ($async), which Gatehouse does not run');
  }
  if (compiled.size >= MAX_COMPILED) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(key, validate);
  return validate;
}

/** A tool of a listing, as far as its schema is concerned. */
export interface SchemaOfTool {
  name: string;
  inputSchema: Record<string, unknown>;
}

export interface SchemaBudgets {
  /** One tool's compile. */
  toolMs: number;
  /** All the listing's compiles together. */
  listingMs: number;
}

/**
 * Why one of these tools' input schemas cannot be used, naming the first such tool, or null
 * when all compile, each within its budget and all within the listing's.
 */
export function schemasProblem(
  tools: readonly SchemaOfTool[],
  budgets: SchemaBudgets,
): string | null {
  const ends = performance.now() + budgets.listingMs;
  for (const tool of tools) {
    const left = ends - performance.now();
    if (left <= 0) {
      return `gives the tool "${tool.name}" an input schema Gatehouse cannot use: the tools' input schemas took longer than ${String(budgets.listingMs)} ms to compile in all`;
    }
    try {
      validatorOf(tool.inputSchema, Math.min(budgets.toolMs, left));
    } catch (error) {
      if (!(error instanceof SchemaUnusable)) throw error;
      const why =
        left < budgets.toolMs && error.message.startsWith('it took longer')
          ? `the tools' input schemas took longer than ${String(budgets.listingMs)} ms to compile in all`
          : error.message;
      return `gives the tool "${tool.name}" an input schema Gatehouse cannot use: ${why}`;
    }
  }
  return null;
}

export interface InputIssue {
  /** `input.<field>`, dotted, as the run's other issues name fields. */
  path: string;
  message: string;
}

function pathOf(error: ErrorObject): string {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
  // ajv reports these at the object; the caller needs the field's own name.
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    segments.push(params.missingProperty);
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    segments.push(params.additionalProperty);
  }
  return ['input', ...segments].join('.');
}

function messageOf(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'unknown field';
  return error.message ?? `fails "${error.keyword}"`;
}

/**
 * The budget is counted in wall time (node:vm's watchdog), so on a loaded machine a check that
 * needs a millisecond of CPU can be descheduled past it. A check that runs out is tried once
 * more: an input that really backtracks runs out again and is refused, at twice the budget's
 * cost, in this worker thread and never on the API's event loop; one that was merely
 * descheduled passes.
 */
function checkedOnce<T>(work: () => T, budgetMs: number): T {
  try {
    return withinCpuBudget(work, budgetMs);
  } catch (error) {
    if (!isCpuBudgetSpent(error)) throw error;
    return withinCpuBudget(work, budgetMs);
  }
}

/**
 * Every problem of `input` against the schema, each naming its field; empty if none. Checking
 * runs within `checkMs`: a schema's `pattern` runs JavaScript's backtracking regular
 * expressions, and an accepted schema may hold one that backtracks exponentially on an input
 * the agent chooses. Past the budget the input is refused, never let through.
 */
export function inputIssues(
  schema: Record<string, unknown>,
  input: unknown,
  budgets: { compileMs: number; checkMs: number },
): InputIssue[] {
  const validate = validatorOf(schema, budgets.compileMs);
  let valid: boolean;
  try {
    valid = checkedOnce(() => validate(input), budgets.checkMs);
  } catch (error) {
    if (!isCpuBudgetSpent(error)) throw error;
    return [
      {
        path: 'input',
        message: `took longer than ${String(budgets.checkMs)} ms to check against the tool's input schema (a pattern that backtracks on it); change the input`,
      },
    ];
  }
  if (valid) return [];
  return (validate.errors ?? []).map((error) => ({
    path: pathOf(error),
    message: messageOf(error),
  }));
}
