import type { BodyDescriptor, ParameterDescriptor } from './descriptors.js';
import { isObject, type JsonObject } from './references.js';

/**
 * An action's input: one object with a member per kind of input the operation takes, each
 * present only where it takes some:
 *
 * ```json
 * {"path": {"owner": "octocat", "repo": "hello"}, "query": {"per_page": 10},
 *  "headers": {"X-Request-Id": "…"}, "body": {"title": "Found a bug"}}
 * ```
 *
 * Grouped rather than flat: a query parameter and a body field may share a name (`state` in the
 * query and in the body), and so may a header and a query parameter; grouped, nothing is
 * ambiguous, the request is built from each group alone, and an agent reads the same shape as
 * the document's own sections. Each group is closed (`additionalProperties: false`): an agent
 * cannot send a parameter the document does not declare. `body` is the document's body schema as
 * it is (any JSON value it allows). A group is required when it holds a required parameter (every
 * path parameter is), `body` when the document requires the body.
 */
export function inputSchemaOf(
  parameters: readonly ParameterDescriptor[],
  body: BodyDescriptor | null,
  defs: JsonObject,
  summary: string | null,
): Record<string, unknown> {
  const properties: [string, unknown][] = [];
  const required: string[] = [];
  for (const [group, where] of [
    ['path', 'path'],
    ['query', 'query'],
    ['headers', 'header'],
  ] as const) {
    const members = parameters.filter((parameter) => parameter.in === where);
    if (members.length === 0) continue;
    const needed = members.filter((parameter) => parameter.required).map(({ name }) => name);
    properties.push([
      group,
      {
        type: 'object',
        additionalProperties: false,
        properties: Object.fromEntries(
          members.map((parameter) => [parameter.name, described(parameter)]),
        ),
        ...(needed.length > 0 ? { required: needed } : {}),
      },
    ]);
    if (needed.length > 0) required.push(group);
  }
  if (body) {
    properties.push(['body', body.schema]);
    if (body.required) required.push('body');
  }
  return {
    type: 'object',
    ...(summary ? { description: summary } : {}),
    additionalProperties: false,
    properties: Object.fromEntries(properties),
    ...(required.length > 0 ? { required } : {}),
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
}

/**
 * A parameter's schema with its description (where the schema has none), and for a path
 * parameter, not empty: an empty value would make an empty path segment, another resource.
 */
function described(parameter: ParameterDescriptor): unknown {
  const schema = parameter.schema;
  if (!isObject(schema)) return schema;
  let out: JsonObject = schema;
  if (parameter.description && out.description === undefined) {
    out = { ...out, description: parameter.description };
  }
  if (parameter.in === 'path' && out.type === 'string' && out.minLength === undefined) {
    out = { ...out, minLength: 1 };
  }
  return out;
}
