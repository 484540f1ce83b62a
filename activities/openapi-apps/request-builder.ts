/**
 * An imported action's request, built from its operation alone: the method and path template
 * are the document's, each path parameter's value fills its own placeholder percent-encoded (so
 * no value can add a segment, a query or a fragment: `/` is `%2F`, `?` `%3F`, `#` `%23`, `%` `%25`),
 * the query holds the declared query parameters only, the headers the declared header parameters
 * only, and the body is the input's `body` sent as JSON. The input is expected to have passed the
 * action's input schema; whatever did not is refused here rather than sent (RequestBuildError,
 * naming the field), and so is a value that would make the path resolve elsewhere: a whole
 * segment of `.` or `..` (the URL parser resolves these even percent-encoded) or an empty one.
 * Pure: the workflow side may call it.
 */
import type { UpstreamRequest } from '../../workflows/catalog/types.js';
import { unsafePath } from '../../workflows/catalog/request-path.js';
import type { OperationDescriptor, ParameterDescriptor } from './descriptors.js';

/** An input the request cannot be built from; `field` is `input.path.owner`, as issues name them. */
export class RequestBuildError extends Error {
  override name = 'RequestBuildError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What an imported action sends. `queryPairs` is the query, in order, a name repeated for an
 * exploded array (`?id=1&id=2`), which UpstreamRequest's `query` (one value per name) cannot
 * hold; `query` is never set. Whoever sends it appends each pair (URLSearchParams.append).
 */
export interface OpenApiRequest extends UpstreamRequest {
  queryPairs: [string, string][];
}

type Scalar = string | number | boolean;

function isScalar(value: unknown): value is Scalar {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function groupOf(input: unknown, group: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RequestBuildError('input', 'must be an object');
  }
  const value = Object.hasOwn(input, group) ? (input as Record<string, unknown>)[group] : undefined;
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RequestBuildError(`input.${group}`, 'must be an object');
  }
  return value as Record<string, unknown>;
}

const GROUPS = { path: 'path', query: 'query', header: 'headers' } as const;

/** A parameter's value as one or more strings, per its serialization; null when absent. */
function written(parameter: ParameterDescriptor, value: unknown, field: string): string[] | null {
  if (value === undefined || value === null) {
    if (parameter.required) throw new RequestBuildError(field, 'is required');
    return null;
  }
  if (isScalar(value)) return [String(value)];
  if (!Array.isArray(value) || parameter.serialization === 'plain') {
    throw new RequestBuildError(field, 'must be a string, number or boolean');
  }
  const items = value.map((item, index) => {
    if (!isScalar(item)) {
      throw new RequestBuildError(
        `${field}.${String(index)}`,
        'must be a string, number or boolean',
      );
    }
    return String(item);
  });
  if (items.length === 0) {
    if (parameter.required) throw new RequestBuildError(field, 'must not be empty');
    return null;
  }
  switch (parameter.serialization) {
    case 'exploded':
      return items;
    case 'space':
      return [items.join(' ')];
    case 'pipe':
      return [items.join('|')];
    default:
      return [items.join(',')];
  }
}

function encodedSegment(value: string, field: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate has no UTF-8 form.
    throw new RequestBuildError(field, 'is not well-formed Unicode text');
  }
}

/** A header value as fetch sends it: no control characters (CR, LF would split it), Latin-1. */
function headerValue(value: string, field: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/.test(value)) {
    throw new RequestBuildError(
      field,
      'holds characters a header cannot (control characters, or beyond Latin-1)',
    );
  }
  return value.trim();
}

export function buildRequest(descriptor: OperationDescriptor, input: unknown): OpenApiRequest {
  const groups = {
    path: groupOf(input, 'path'),
    query: groupOf(input, 'query'),
    header: groupOf(input, 'headers'),
  };
  for (const [where, group] of Object.entries(GROUPS) as [keyof typeof GROUPS, string][]) {
    for (const name of Object.keys(groups[where])) {
      const declared = descriptor.parameters.some(
        (parameter) => parameter.in === where && parameter.name === name,
      );
      if (!declared) throw new RequestBuildError(`input.${group}.${name}`, 'unknown field');
    }
  }
  const valueOf = (parameter: ParameterDescriptor): [unknown, string] => {
    const group = groups[parameter.in];
    const value = Object.hasOwn(group, parameter.name) ? group[parameter.name] : undefined;
    return [value, `input.${GROUPS[parameter.in]}.${parameter.name}`];
  };

  const fields = new Map<string, string>();
  const path = descriptor.path.replace(/\{([^{}/]+)\}/g, (_whole, name: string) => {
    const parameter = descriptor.parameters.find((one) => one.in === 'path' && one.name === name);
    const field = `input.path.${name}`;
    if (!parameter) throw new RequestBuildError(field, 'is not a path parameter of this action');
    const [value] = valueOf(parameter);
    const strings = written({ ...parameter, required: true }, value, field) ?? [];
    const encoded = strings.map((one) => encodedSegment(one, field)).join(',');
    if (encoded === '') throw new RequestBuildError(field, 'must not be empty');
    fields.set(encoded, field);
    return encoded;
  });
  const unsafe = unsafePath(path);
  if (unsafe) {
    throw new RequestBuildError(
      fields.get(unsafe.segment) ?? 'input.path',
      `${unsafe.problem}: the app would receive another path than this action's`,
    );
  }

  const queryPairs: [string, string][] = [];
  // A Map: a header may be named `__proto__`, which assigning into an object would swallow.
  const headers = new Map<string, string>();
  for (const parameter of descriptor.parameters) {
    if (parameter.in === 'path') continue;
    const [value, field] = valueOf(parameter);
    const strings = written(parameter, value, field);
    if (strings === null) continue;
    if (parameter.in === 'query') {
      for (const one of strings) {
        encodedSegment(one, field);
        queryPairs.push([parameter.name, one]);
      }
    } else {
      headers.set(parameter.name.toLowerCase(), headerValue(strings.join(','), field));
    }
  }

  const request: OpenApiRequest = { method: descriptor.method, path, queryPairs };
  const body =
    typeof input === 'object' && input !== null && Object.hasOwn(input, 'body')
      ? (input as Record<string, unknown>).body
      : undefined;
  if (body !== undefined) {
    if (!descriptor.body) throw new RequestBuildError('input.body', 'unknown field');
    request.body = body;
    if (descriptor.body.mediaType !== 'application/json') {
      headers.set('content-type', descriptor.body.mediaType);
    }
  } else if (descriptor.body?.required) {
    throw new RequestBuildError('input.body', 'is required');
  }
  if (headers.size > 0) request.headers = Object.fromEntries(headers);
  return request;
}
