/**
 * One operation's parts, read from the document: its path template, parameters and request
 * body, each checked for what Gatehouse can send. What an action cannot take is either ignored
 * (an optional cookie parameter: the action never sends it, and says so) or makes the operation
 * unimportable when the operation needs it (a required cookie, a body only as multipart).
 */
import type {
  BodyDescriptor,
  IgnoredParameter,
  ParameterDescriptor,
  ParameterSerialization,
} from './descriptors.js';
import { quoted } from './limits.js';
import {
  isObject,
  member,
  OperationProblem,
  type DocumentReferences,
  type JsonObject,
} from './references.js';
import type { SchemaBuilder } from './schemas.js';

/** `{name}` in a path template. */
const PLACEHOLDER = /\{([^{}/]*)\}/g;
/** What a literal part of a path template may hold: RFC 3986 path characters, `%XX` escapes. */
const LITERAL = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers an action never sends as a parameter. `Accept`, `Content-Type` and `Authorization`:
 * OpenAPI says such parameters are ignored. The rest, as for the proxy: credentials and routing
 * are Gatehouse's (the connection adds the credential), hop-by-hop headers describe one hop, and
 * a method override would let a GET graded read act as a DELETE.
 */
const NOT_SENT = new Set([
  'accept',
  'content-type',
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
  'accept-encoding',
  'expect',
  'forwarded',
  'traceparent',
  'tracestate',
  'service-user',
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
]);

/** The placeholders of a path template, in order; throws when the template is not one we send. */
export function templatePlaceholders(path: string): string[] {
  if (!path.startsWith('/')) {
    throw new OperationProblem(`its path ${quoted(path)} does not start with "/"`);
  }
  const literal = path.replace(PLACEHOLDER, '');
  if (!LITERAL.test(literal) || /[{}]/.test(literal)) {
    throw new OperationProblem(
      `its path ${quoted(path)} holds characters a path template cannot (only RFC 3986 path characters, %XX escapes and {name} placeholders)`,
    );
  }
  for (const segment of path.slice(1).split('/')) {
    if (DOT_SEGMENT.test(segment)) {
      throw new OperationProblem(`its path ${quoted(path)} has a "." or ".." segment`);
    }
  }
  const names = [...path.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '');
  if (names.some((name) => name === '')) {
    throw new OperationProblem(`its path ${quoted(path)} has an empty placeholder "{}"`);
  }
  if (new Set(names).size !== names.length) {
    throw new OperationProblem(`its path ${quoted(path)} names a placeholder twice`);
  }
  return names;
}

/** A schema's `type`, where it says one. */
function typeOf(schema: unknown, refs: DocumentReferences): string | null {
  const resolved = refs.follow(schema, 'a parameter schema');
  if (!isObject(resolved)) return null;
  const type = member(resolved, 'type');
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const kinds = type.filter((kind) => kind !== 'null');
    return kinds.length === 1 && typeof kinds[0] === 'string' ? kinds[0] : null;
  }
  return null;
}

interface ParameterContext {
  refs: DocumentReferences;
  schemas: SchemaBuilder;
  /** Header and query names the connection's credential goes in (apiKey schemes). */
  credentialHeaders: ReadonlySet<string>;
  credentialQuery: ReadonlySet<string>;
}

type ParameterOutcome =
  | { kind: 'taken'; parameter: ParameterDescriptor }
  | { kind: 'ignored'; ignored: IgnoredParameter };

function serializationOf(
  where: 'path' | 'query' | 'header',
  parameter: JsonObject,
  type: string | null,
): ParameterSerialization | { unsupported: string } {
  const style = member(parameter, 'style');
  const explodeValue = member(parameter, 'explode');
  const named = (value: unknown) => quoted(JSON.stringify(value), 40);
  if (where === 'query') {
    const chosen = style ?? 'form';
    const explode = typeof explodeValue === 'boolean' ? explodeValue : chosen === 'form';
    if (type === 'object') {
      return { unsupported: 'it is an object in the query, which Gatehouse does not write' };
    }
    if (type !== 'array') {
      return chosen === 'form'
        ? 'plain'
        : { unsupported: `its style ${named(chosen)} is not supported` };
    }
    if (chosen === 'form') return explode ? 'exploded' : 'comma';
    if (chosen === 'spaceDelimited' && !explode) return 'space';
    if (chosen === 'pipeDelimited' && !explode) return 'pipe';
    return {
      unsupported: `its style ${named(chosen)}${explode ? ' exploded' : ''} is not supported`,
    };
  }
  if (style !== undefined && style !== 'simple') {
    return {
      unsupported: `its style ${named(style)} is not supported (only "simple" in the ${where})`,
    };
  }
  if (type === 'object') {
    return { unsupported: `it is an object in the ${where}, which Gatehouse does not write` };
  }
  return type === 'array' ? 'comma' : 'plain';
}

/** One parameter object (resolved), as an action takes it or ignores it. */
function parameterOf(
  parameter: JsonObject,
  context: ParameterContext,
): ParameterOutcome | { kind: 'problem'; reason: string; required: boolean; name: string } {
  const name = member(parameter, 'name');
  const where = member(parameter, 'in');
  if (typeof name !== 'string' || name === '') {
    throw new OperationProblem('it has a parameter without a name');
  }
  const required = member(parameter, 'required') === true || where === 'path';
  const ignore = (reason: string): ParameterOutcome => ({
    kind: 'ignored',
    ignored: { name, in: String(where), reason },
  });
  const problem = (reason: string) => ({ kind: 'problem' as const, reason, required, name });
  if (where === 'cookie') {
    return required
      ? problem('it requires a cookie, which Gatehouse does not send')
      : ignore('a cookie, which Gatehouse does not send');
  }
  if (where !== 'path' && where !== 'query' && where !== 'header') {
    throw new OperationProblem(
      `its parameter ${quoted(name)} is in ${quoted(String(where))}, which OpenAPI does not define`,
    );
  }
  if (where === 'header') {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) return problem(`its header ${quoted(name)} is not a header name`);
    if (NOT_SENT.has(lower) || lower.startsWith('gatehouse-') || lower.startsWith('x-forwarded-')) {
      return ['accept', 'content-type', 'authorization'].includes(lower)
        ? ignore('OpenAPI ignores this header as a parameter')
        : required
          ? problem(`it requires the header ${quoted(name)}, which an action never sets`)
          : ignore('a header an action never sets (credentials, routing, hop-by-hop)');
    }
    if (context.credentialHeaders.has(lower)) {
      return ignore("the connection's API key goes in this header");
    }
  }
  if (where === 'query' && context.credentialQuery.has(name)) {
    return ignore("the connection's API key goes in this query parameter");
  }
  const schema = member(parameter, 'schema');
  if (schema === undefined) {
    return member(parameter, 'content') === undefined
      ? problem(`its parameter ${quoted(name)} has no schema`)
      : required
        ? problem(
            `its parameter ${quoted(name)} is described by media type, which is not supported`,
          )
        : ignore('described by a media type (content), which is not supported');
  }
  const type = typeOf(schema, context.refs);
  const serialization = serializationOf(where, parameter, type);
  if (typeof serialization !== 'string') {
    return required
      ? problem(`its parameter ${quoted(name)}: ${serialization.unsupported}`)
      : ignore(serialization.unsupported);
  }
  const description = member(parameter, 'description');
  return {
    kind: 'taken',
    parameter: {
      name,
      in: where,
      required,
      serialization,
      schema: context.schemas.build(schema),
      description: typeof description === 'string' ? description.slice(0, 1000) : null,
    },
  };
}

/**
 * The operation's parameters (the path item's, overridden by the operation's own of the same
 * name and location) as the action takes them, and the ones it ignores.
 */
export function parametersOf(
  pathItem: JsonObject,
  operation: JsonObject,
  placeholders: readonly string[],
  context: ParameterContext,
): { parameters: ParameterDescriptor[]; ignored: IgnoredParameter[] } {
  const declared = new Map<string, JsonObject>();
  for (const list of [member(pathItem, 'parameters'), member(operation, 'parameters')]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new OperationProblem('its parameters are not a list');
    for (const entry of list) {
      const parameter = context.refs.follow(entry, 'a parameter');
      if (!isObject(parameter))
        throw new OperationProblem('it has a parameter that is not an object');
      const name = member(parameter, 'name');
      const where = member(parameter, 'in');
      const key = `${String(where)}:${where === 'header' ? String(name).toLowerCase() : String(name)}`;
      declared.set(key, parameter);
    }
  }
  const parameters: ParameterDescriptor[] = [];
  const ignored: IgnoredParameter[] = [];
  for (const parameter of declared.values()) {
    const outcome = parameterOf(parameter, context);
    if (outcome.kind === 'taken') parameters.push(outcome.parameter);
    else if (outcome.kind === 'ignored') ignored.push(outcome.ignored);
    else throw new OperationProblem(outcome.reason);
  }
  const inPath = parameters.filter((parameter) => parameter.in === 'path');
  for (const placeholder of placeholders) {
    if (!inPath.some((parameter) => parameter.name === placeholder)) {
      throw new OperationProblem(
        `its path has {${placeholder}} but no path parameter of that name`,
      );
    }
  }
  for (const parameter of inPath) {
    if (!placeholders.includes(parameter.name)) {
      throw new OperationProblem(
        `it declares the path parameter ${quoted(parameter.name)}, which its path does not hold`,
      );
    }
  }
  return { parameters, ignored };
}

/** `application/json`, `application/json; charset=utf-8`, `application/vnd.api+json`. */
function isJson(mediaType: string): boolean {
  const essence = mediaType.split(';')[0]?.trim().toLowerCase() ?? '';
  return essence === 'application/json' || /^[a-z0-9.+-]+\/[a-z0-9.+-]*\+json$/.test(essence);
}

/** The operation's JSON request body, or why a body it allows is not sent. */
export function bodyOf(
  operation: JsonObject,
  refs: DocumentReferences,
  schemas: SchemaBuilder,
): { body: BodyDescriptor | null; ignored: string | null } {
  const declared = member(operation, 'requestBody');
  if (declared === undefined) return { body: null, ignored: null };
  const requestBody = refs.follow(declared, 'the request body');
  if (!isObject(requestBody)) throw new OperationProblem('its request body is not an object');
  const content = member(requestBody, 'content');
  if (!isObject(content)) throw new OperationProblem('its request body has no content');
  const required = member(requestBody, 'required') === true;
  const types = Object.keys(content);
  const json =
    types.find((type) => type.split(';')[0]?.trim().toLowerCase() === 'application/json') ??
    types.find(isJson);
  if (json === undefined) {
    const named = types.map((type) => quoted(type, 60)).join(', ') || 'no media type';
    if (required) {
      throw new OperationProblem(
        `its request body is ${named} only, and Gatehouse sends JSON bodies (application/json or +json)`,
      );
    }
    return { body: null, ignored: `the request body is ${named}, not JSON: it is never sent` };
  }
  const media = member(content, json);
  const schema = isObject(media) ? member(media, 'schema') : undefined;
  const essence = json.split(';')[0]?.trim().toLowerCase() ?? 'application/json';
  return {
    body: { mediaType: essence, required, schema: schemas.build(schema ?? {}) },
    ignored: null,
  };
}
