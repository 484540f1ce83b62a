import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { isCpuBudgetSpent, withinCpuBudget } from '../../infra/cpu-budget.js';

/**
 * A remote MCP tool's input, checked against the tool's JSON Schema as accepted (issue 21) with
 * ajv, before any workflow starts and again when a held call runs. Each dialect a tool may
 * declare in `$schema` gets its own validator (their keywords differ: draft-07's array `items`
 * is 2020-12's `prefixItems`); none declared means 2020-12, MCP's default. Schemas are checked
 * against their meta-schema when compiled, so a malformed one is refused at registration.
 * `strict: false`: a server may use keywords ajv does not know (annotations, vendor
 * extensions), which JSON Schema says to ignore. Formats are annotations by default in
 * 2020-12 and are left to the server.
 */
const options = { strict: false, allErrors: true, validateFormats: false } as const;

const dialects = {
  draft07: new Ajv(options),
  draft2019: new Ajv2019(options),
  draft2020: new Ajv2020(options),
};

type Dialect = keyof typeof dialects;

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

/** Compiled validators by schema text: compiling is the costly part, and tools are few. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 512;

/** The validator of a tool's input schema; throws with a readable message if it has none. */
export function toolInputValidator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  const dialect = dialectOf(schema);
  if (dialect === null) {
    throw new Error(
      `its $schema ${JSON.stringify(schema.$schema)} is not a JSON Schema dialect Gatehouse validates (draft-07, 2019-09, 2020-12)`,
    );
  }
  let validate: ValidateFunction;
  try {
    validate = dialects[dialect].compile(schema);
  } catch (error) {
    // ajv compiles each reference and subschema by recursion: a chain of them deep enough
    // overflows its stack, which says nothing to whoever reads the refusal.
    if (error instanceof RangeError) {
      throw new Error('its references or subschemas nest too deeply to compile', { cause: error });
    }
    throw error;
  } finally {
    // Compiling registers the schema's $id; the cache below is what keeps it, not ajv.
    dialects[dialect].removeSchema(schema);
  }
  // An `$async` schema's validator answers a promise, which would read as valid whatever the
  // input: such a schema is refused like a malformed one.
  if ((validate as { $async?: unknown }).$async === true) {
    throw new Error('it is an asynchronous schema ($async), which Gatehouse does not run');
  }
  if (compiled.size >= MAX_COMPILED) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  compiled.set(key, validate);
  return validate;
}

/** Why a schema cannot be used to check input, or null when it can. */
export function toolSchemaProblem(schema: Record<string, unknown>): string | null {
  try {
    toolInputValidator(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : 'it cannot be compiled';
  }
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
 * How long checking one input may take. A schema's `pattern` runs JavaScript's backtracking
 * regular expressions, and an accepted schema may hold one that backtracks exponentially on an
 * input the agent chooses: unbounded, one call could hold the API's thread for seconds or
 * hours. Past the budget the input is refused, never let through.
 */
export const TOOL_INPUT_BUDGET_MS = 100;

/** Every problem of `input` against the tool's schema, each naming its field; empty if none. */
export function toolInputIssues(schema: Record<string, unknown>, input: unknown): InputIssue[] {
  const validate = toolInputValidator(schema);
  let valid: boolean;
  try {
    valid = withinCpuBudget(() => validate(input), TOOL_INPUT_BUDGET_MS);
  } catch (error) {
    if (!isCpuBudgetSpent(error)) throw error;
    return [
      {
        path: 'input',
        message: `took longer than ${String(TOOL_INPUT_BUDGET_MS)} ms to check against the tool's input schema (a pattern that backtracks on it); change the input`,
      },
    ];
  }
  if (valid) return [];
  return (validate.errors ?? []).map((error) => ({
    path: pathOf(error),
    message: messageOf(error),
  }));
}
