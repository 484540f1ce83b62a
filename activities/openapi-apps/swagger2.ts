/**
 * A Swagger 2.0 document read as OpenAPI 3.0, for what an import uses of it: the server from
 * `schemes`/`host`/`basePath`, `definitions` as `components.schemas`, a `body` parameter as the
 * request body (its media type from `consumes`), `formData` parameters as a form body (which
 * actions do not send: the operation is skipped if it requires one), every other parameter's
 * type fields as its `schema` and its `collectionFormat` as a style, and `securityDefinitions`
 * as security schemes (`accessCode` is the authorization-code flow). References are rewritten
 * to their 3.0 places. Responses are not carried over: an import does not use them.
 *
 * Written here rather than taken from `swagger2openapi`, whose last release is from 2024 and
 * which resolves external references itself (over the network): what an import needs of a 2.0
 * document is this small mapping, with the same bounds as any document (it runs after the
 * document was read within them, and copies it once).
 */
import { OpenApiImportError } from './limits.js';
import { isObject, member, type JsonObject } from './references.js';

/** The fields of a 2.0 non-body parameter (and its `items`) that are schema keywords. */
const SCHEMA_FIELDS = [
  'type',
  'format',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'enum',
  'multipleOf',
];

const REF_PLACES: [string, string][] = [
  ['#/definitions/', '#/components/schemas/'],
  ['#/parameters/', '#/components/parameters/'],
  ['#/responses/', '#/components/responses/'],
];

/** A copy of a value with every `$ref` string pointed at its 3.0 place. */
function rewritten(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewritten);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (key === '$ref' && typeof item === 'string') {
        const place = REF_PLACES.find(([from]) => item.startsWith(from));
        return [key, place ? `${place[1]}${item.slice(place[0].length)}` : item];
      }
      return [key, rewritten(item)];
    }),
  );
}

function itemsSchema(items: unknown): unknown {
  if (!isObject(items)) return items;
  return Object.fromEntries(
    SCHEMA_FIELDS.flatMap((field) => {
      const value = member(items, field);
      if (value === undefined) return [];
      return [[field, value]];
    }).concat(
      member(items, 'items') === undefined ? [] : [['items', itemsSchema(member(items, 'items'))]],
    ),
  );
}

const STYLES: Record<string, { style: string; explode: boolean } | undefined> = {
  csv: { style: 'form', explode: false },
  ssv: { style: 'spaceDelimited', explode: false },
  pipes: { style: 'pipeDelimited', explode: false },
  multi: { style: 'form', explode: true },
  tsv: { style: 'tabDelimited', explode: false },
};

/** A 2.0 non-body parameter as a 3.0 one. */
function parameter30(parameter: JsonObject): JsonObject {
  const where = member(parameter, 'in');
  const format = member(parameter, 'collectionFormat') ?? 'csv';
  const style =
    member(parameter, 'type') === 'array' && typeof format === 'string'
      ? STYLES[format]
      : undefined;
  return {
    name: member(parameter, 'name'),
    in: where,
    required: member(parameter, 'required') === true,
    ...(typeof parameter.description === 'string' ? { description: parameter.description } : {}),
    schema: itemsSchema(parameter),
    ...(style
      ? where === 'query'
        ? style
        : style.style === 'form' && !style.explode
          ? { style: 'simple' }
          : style
      : {}),
  };
}

function jsonFirst(types: string[]): string {
  return (
    types.find((type) => /^application\/(?:[a-z0-9.+-]*\+)?json\b/i.test(type)) ??
    types[0] ??
    'application/json'
  );
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : null;
}

/** An operation's (or path item's) parameters, with the body ones taken out as a request body. */
function operation30(
  operation: JsonObject,
  pathParameters: unknown[],
  swagger: JsonObject,
): JsonObject {
  const global = member(swagger, 'parameters');
  const resolve = (entry: unknown): unknown => {
    const ref = isObject(entry) ? member(entry, '$ref') : undefined;
    // References were rewritten to their 3.0 places already.
    const place = '#/components/parameters/';
    if (typeof ref === 'string' && ref.startsWith(place) && isObject(global)) {
      const name = decodeURIComponent(ref.slice(place.length))
        .replace(/~1/g, '/')
        .replace(/~0/g, '~');
      return member(global, name) ?? entry;
    }
    return entry;
  };
  const own = Array.isArray(operation.parameters) ? (operation.parameters as unknown[]) : [];
  const merged = new Map<string, unknown>();
  for (const entry of [...pathParameters, ...own]) {
    const parameter = resolve(entry);
    const key = isObject(parameter)
      ? `${String(member(parameter, 'in'))}:${String(member(parameter, 'name'))}`
      : `?${String(merged.size)}`;
    merged.set(key, parameter);
  }
  const consumes =
    stringList(member(operation, 'consumes')) ?? stringList(member(swagger, 'consumes')) ?? [];
  const parameters: unknown[] = [];
  let requestBody: JsonObject | undefined;
  const form: JsonObject[] = [];
  for (const parameter of merged.values()) {
    if (!isObject(parameter)) {
      parameters.push(parameter);
      continue;
    }
    const where = member(parameter, 'in');
    if (where === 'body') {
      requestBody = {
        required: member(parameter, 'required') === true,
        content: { [jsonFirst(consumes)]: { schema: member(parameter, 'schema') ?? {} } },
      };
    } else if (where === 'formData') form.push(parameter);
    else parameters.push(parameter30(parameter));
  }
  if (form.length > 0 && requestBody === undefined) {
    const type = consumes.find((one) => /multipart|urlencoded/i.test(one)) ?? 'multipart/form-data';
    requestBody = {
      required: form.some((parameter) => member(parameter, 'required') === true),
      content: { [type]: {} },
    };
  }
  const kept = Object.fromEntries(
    Object.entries(operation).filter(
      ([key]) => key !== 'parameters' && key !== 'responses' && key !== 'consumes',
    ),
  );
  return {
    ...kept,
    parameters,
    ...(requestBody ? { requestBody } : {}),
  };
}

function securityScheme30(definition: unknown): unknown {
  if (!isObject(definition)) return definition;
  const type = member(definition, 'type');
  if (type === 'basic') return { type: 'http', scheme: 'basic' };
  if (type !== 'oauth2') return definition;
  const flow = member(definition, 'flow');
  const names: Record<string, string> = {
    accessCode: 'authorizationCode',
    implicit: 'implicit',
    password: 'password',
    application: 'clientCredentials',
  };
  const name = typeof flow === 'string' ? names[flow] : undefined;
  if (!name) return { type: 'oauth2', flows: {} };
  return {
    type: 'oauth2',
    flows: {
      [name]: {
        authorizationUrl: member(definition, 'authorizationUrl'),
        tokenUrl: member(definition, 'tokenUrl'),
        scopes: member(definition, 'scopes') ?? {},
      },
    },
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

export function swaggerAsOpenApi(raw: JsonObject): JsonObject {
  const swagger = rewritten(raw) as JsonObject;
  const paths = member(swagger, 'paths');
  if (paths !== undefined && !isObject(paths)) {
    throw new OpenApiImportError('the document\'s "paths" is not an object');
  }
  const host = member(swagger, 'host');
  const basePath = member(swagger, 'basePath');
  const schemes = stringList(member(swagger, 'schemes')) ?? [];
  const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? 'https');
  const base = typeof basePath === 'string' ? basePath : '';
  const url = typeof host === 'string' && host !== '' ? `${scheme}://${host}${base}` : base || '/';
  const convertedPaths = Object.fromEntries(
    Object.entries(isObject(paths) ? paths : {}).map(([path, item]) => {
      if (!isObject(item)) return [path, item];
      const pathParameters = Array.isArray(item.parameters) ? (item.parameters as unknown[]) : [];
      return [
        path,
        Object.fromEntries(
          Object.entries(item)
            .filter(([key]) => key !== 'parameters')
            .map(([key, value]) => [
              key,
              METHODS.includes(key) && isObject(value)
                ? operation30(value, pathParameters, swagger)
                : value,
            ]),
        ),
      ];
    }),
  );
  const definitions = member(swagger, 'securityDefinitions');
  const globalParameters = member(swagger, 'parameters');
  return {
    openapi: '3.0.3',
    info: member(swagger, 'info'),
    servers: [{ url }],
    paths: convertedPaths,
    ...(member(swagger, 'security') === undefined ? {} : { security: swagger.security }),
    components: {
      schemas: member(swagger, 'definitions') ?? {},
      parameters: isObject(globalParameters)
        ? Object.fromEntries(
            Object.entries(globalParameters).map(([name, parameter]) => [
              name,
              isObject(parameter) && member(parameter, 'in') !== 'body'
                ? parameter30(parameter)
                : parameter,
            ]),
          )
        : {},
      securitySchemes: isObject(definitions)
        ? Object.fromEntries(
            Object.entries(definitions).map(([name, definition]) => [
              name,
              securityScheme30(definition),
            ]),
          )
        : {},
    },
  };
}
