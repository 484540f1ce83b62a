import type { z } from 'zod';
import { ApiError, type Issue } from '../../errors.js';
import { parseJsonBody } from '../../http/json-body.js';
import { parse } from '../../http/validate.js';
import { replacePolicyBody } from '../../routes/policies.js';

/** A policy version as `PUT /v1/policies/{id}` takes it. */
export type PolicyBody = z.infer<typeof replacePolicyBody>;

export type CandidateReading = { ok: true; body: PolicyBody } | { ok: false; issues: Issue[] };

/**
 * Browsers send a textarea's line breaks as CRLF and parse them back to LF from a hidden field:
 * one form of the text, so what was simulated and what is saved are compared alike.
 */
export function normalizedText(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/**
 * The candidate a person typed, read as the API reads a PUT body: the same JSON reader (UTF-8,
 * no duplicate keys, no NUL, bounded nesting) and the same zod schema, so the console refuses
 * exactly what the API refuses, with the same paths and messages.
 */
export function readCandidate(text: string): CandidateReading {
  try {
    const value = parseJsonBody(Buffer.from(normalizedText(text), 'utf8'), undefined);
    return { ok: true, body: parse(replacePolicyBody, value, 'body') };
  } catch (error) {
    return { ok: false, issues: issuesOf(error) };
  }
}

/** An API refusal as the issues a page lists; anything else is not the candidate's fault. */
export function issuesOf(error: unknown): Issue[] {
  if (!(error instanceof ApiError) || error.status >= 500) throw error;
  const listed = error.extra.issues;
  if (Array.isArray(listed) && listed.length > 0) return listed as Issue[];
  return [{ path: 'policy', message: error.message }];
}
