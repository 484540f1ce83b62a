import { isUtf8 } from 'node:buffer';
import express, { type Request, type RequestHandler } from 'express';
import { InvalidRequestError, UnsupportedMediaTypeError } from '../errors.js';
import type { RouteTable } from './route-table.js';
import { malformedError, malformedIn } from './validate.js';

const JSON_TYPES = ['application/json', 'application/*+json'];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** The `charset` parameter of a Content-Type header, lower-cased; undefined when absent. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return (match?.[1] ?? match?.[2])?.toLowerCase();
}

/** Index of the quote that closes the JSON string opening at `start`. */
function stringEnd(text: string, start: number): number {
  for (let from = start + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

interface Frame {
  /** Names seen in this object; null for an array. */
  names: Set<string> | null;
  /** The name or index being read, which is where a duplicate below it is. */
  at: string | number;
}

/**
 * Where `text`, already known to be JSON, gives one object the same property name twice, as the
 * path to the second one; null when it never does. JSON.parse silently keeps the last value, so
 * `{"user":"a","user":"b"}` would act for "b" while anything reading the text (a log, an approver,
 * another parser) may see "a". Names are compared decoded: `"\u0075ser"` is `"user"`.
 */
export function duplicateKeyAt(text: string): string[] | null {
  const frames: Frame[] = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      const end = stringEnd(text, i);
      const frame = frames.at(-1);
      if (nameNext && frame?.names) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (frame.names.has(name)) return [...frames.slice(0, -1).map((f) => String(f.at)), name];
        frame.names.add(name);
        frame.at = name;
        nameNext = false;
      }
      i = end;
      continue;
    }
    switch (char) {
      case OPEN_OBJECT:
        frames.push({ names: new Set(), at: '' });
        nameNext = true;
        break;
      case OPEN_ARRAY:
        frames.push({ names: null, at: 0 });
        nameNext = false;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        frames.pop();
        nameNext = false;
        break;
      case COLON:
        nameNext = false;
        break;
      case COMMA: {
        const frame = frames.at(-1);
        if (frame?.names) nameNext = true;
        else if (frame) frame.at = Number(frame.at) + 1;
        break;
      }
    }
  }
  return null;
}

function notJson(): InvalidRequestError {
  // JSON.parse's own message quotes the body, which may hold a secret: never echoed.
  return new InvalidRequestError('The request body is not valid JSON.', [
    { path: 'body', message: 'must be a JSON object or array' },
  ]);
}

/**
 * A JSON request body from its bytes, or the error that names what is wrong with it. UTF-8 only
 * (RFC 8259 §8.1): bytes that are not UTF-8 would otherwise be stored as U+FFFD. Then, on the
 * parsed value, one walk refuses nesting beyond 256 levels, NUL and lone surrogates, before the
 * text is scanned for duplicate names.
 */
export function parseJsonBody(bytes: Buffer, contentType: string | undefined): unknown {
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new UnsupportedMediaTypeError(
      'JSON request bodies must be UTF-8 (RFC 8259): send charset=utf-8, or no charset.',
    );
  }
  if (!isUtf8(bytes)) {
    throw new InvalidRequestError('The request body is not valid UTF-8.', [
      { path: 'body', message: 'must be valid UTF-8' },
    ]);
  }
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // An empty body is read as `{}`, a common client habit that express.json also forgave.
  if (text.length === 0) return {};
  if (!/^[ \t\n\r]*[[{]/.test(text)) throw notJson();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notJson();
  }
  const malformed = malformedIn(value);
  if (malformed) throw malformedError(malformed, 'body');
  const duplicate = duplicateKeyAt(text);
  if (duplicate) {
    const path = duplicate.join('.');
    throw new InvalidRequestError(`Invalid request body (${path}: duplicate key).`, [
      { path, message: 'is given twice in one object' },
    ]);
  }
  return value;
}

/** Turns the bytes body-parser read for a JSON media type into `req.body`. */
const parsedBody: RequestHandler = (req, _res, next) => {
  if (Buffer.isBuffer(req.body)) req.body = parseJsonBody(req.body, req.get('content-type'));
  next();
};

/**
 * The JSON body parser of every route but the proxy: body-parser reads the bytes (size limit,
 * Content-Encoding), then `parseJsonBody` makes them `req.body`. Other media types are left
 * unread, as express.json leaves them.
 */
export function jsonBody(options: { limitBytes: number }) {
  return [express.raw({ type: JSON_TYPES, limit: options.limitBytes }), parsedBody];
}

/** The media type a Content-Type names (`type/subtype`, lower-cased), or null when none. */
export function mediaTypeOf(contentType: string | undefined): string | null {
  // RFC 9110 §8.3.1: type "/" subtype, each a token, then optional parameters.
  const match = /^\s*([\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+)\s*(?:;|$)/.exec(contentType ?? '');
  return match?.[1]?.toLowerCase() ?? null;
}

/**
 * 415 for a body sent as something other than what the endpoint reads, saying what it came as:
 * the media type only, never the rest of the header.
 */
export function notReadableAs(
  expected: string,
  contentType: string | undefined,
): UnsupportedMediaTypeError {
  const type = mediaTypeOf(contentType);
  const sent =
    contentType === undefined || contentType.trim() === ''
      ? 'has no Content-Type'
      : type === null
        ? 'has a Content-Type that names no media type'
        : `is ${type}`;
  return new UnsupportedMediaTypeError(`The request body ${sent}: ${expected}.`);
}

/** 415 for a body of the JSON API sent as `contentType`. */
export function notJsonMediaType(contentType: string | undefined): UnsupportedMediaTypeError {
  return notReadableAs(
    'this API reads JSON, sent with Content-Type: application/json (or an application/*+json type), in UTF-8',
    contentType,
  );
}

/** Whether the request brings content: a length above 0, or a chunked body (RFC 9112 §6.3). */
export function hasContent(req: Request): boolean {
  return Number(req.get('content-length') ?? '0') > 0 || req.get('transfer-encoding') !== undefined;
}

/**
 * 415 for a body the JSON parser leaves unread (another media type, or none named): the route
 * would otherwise go on as if no body had come, and answer a wrong Content-Type as a missing
 * field. Only for what a route takes: an unknown path or a method the path does not take goes on
 * to its 404 or 405. No body, or an empty one, whatever its Content-Type, is no body.
 */
export function jsonBodiesOnly(routes: RouteTable): RequestHandler {
  return (req, _res, next) => {
    if (
      hasContent(req) &&
      !req.is(JSON_TYPES) &&
      routes.takes(req.method, `${req.baseUrl}${req.path}`)
    ) {
      throw notJsonMediaType(req.get('content-type'));
    }
    next();
  };
}
