import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { ApiError, InvalidRequestError } from '../errors.js';
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
    throw new ApiError(
      'unsupported_media_type',
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
