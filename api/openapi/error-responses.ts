import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { ErrorCode } from '../../workflows/error-codes.js';
import {
  envelopeOf,
  examplesOf,
  MEANINGS,
  statusOf,
  type ErrorExample,
  type ExampleContext,
} from './error-examples.js';

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 429 | 500 | 503 | 504;

/**
 * What an operation can answer besides success: a status (with the codes it usually carries) or
 * a code (its status then shows exactly the codes named for it).
 */
export type ErrorSpec = ErrorStatus | ErrorCode;

const USUAL: Record<ErrorStatus, ErrorCode[]> = {
  400: ['invalid_request'],
  401: ['invalid_api_key'],
  403: ['insufficient_access'],
  404: ['not_found'],
  409: ['conflict'],
  410: ['gone'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  429: ['rate_limited'],
  500: ['internal_error'],
  503: ['service_unavailable'],
  504: ['upstream_timeout'],
};

const TITLES: Record<ErrorStatus, string> = {
  400: 'Invalid request',
  401: 'Not authenticated',
  403: 'Refused',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Unavailable',
  504: 'Timed out',
};

function isStatus(spec: ErrorSpec): spec is ErrorStatus {
  return typeof spec === 'number';
}

/** The codes each status of the operation carries, statuses in ascending order. */
export function codesByStatus(specs: readonly ErrorSpec[]): Map<ErrorStatus, ErrorCode[]> {
  const named = new Map<ErrorStatus, ErrorCode[]>();
  for (const spec of specs) {
    if (isStatus(spec)) continue;
    const status = statusOf(spec) as ErrorStatus;
    const codes = named.get(status) ?? [];
    if (!codes.includes(spec)) codes.push(spec);
    named.set(status, codes);
  }
  const statuses = new Set<ErrorStatus>([...named.keys(), ...specs.filter(isStatus)]);
  return new Map(
    [...statuses]
      .sort((a, b) => a - b)
      .map((status) => [status, named.get(status) ?? USUAL[status]]),
  );
}

function describe(status: ErrorStatus, codes: readonly ErrorCode[], note?: string): string {
  const lines = codes.map((code) => `- \`${code}\`: ${MEANINGS[code]}`);
  return [`**${TITLES[status]}.**`, ...(note ? [note] : []), '', ...lines].join('\n');
}

/**
 * The error responses of one operation: per status, a description naming its codes and one
 * example per situation, each a real envelope of that code.
 */
export function errorResponses(
  specs: readonly ErrorSpec[],
  context: ExampleContext & {
    own?: readonly ErrorExample[];
    notes?: Partial<Record<ErrorStatus, string>>;
  },
  schema: z.ZodType,
): NonNullable<RouteConfig['responses']> {
  const responses: NonNullable<RouteConfig['responses']> = {};
  for (const [status, codes] of codesByStatus(specs)) {
    const examples: Record<string, { summary: string; value: unknown }> = {};
    for (const code of codes) {
      const found = examplesOf(code, context, context.own ?? []);
      found.forEach((example, index) => {
        const key = found.length > 1 ? `${code}_${String(index + 1)}` : code;
        examples[key] = { summary: `${code}: ${example.when}`, value: envelopeOf(example) };
      });
    }
    responses[status] = {
      description: describe(status, codes, context.notes?.[status]),
      content: { 'application/json': { schema, examples } },
    };
  }
  return responses;
}
