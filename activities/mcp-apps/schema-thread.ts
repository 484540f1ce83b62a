import { parentPort } from 'node:worker_threads';
import {
  inputIssues,
  schemasProblem,
  SchemaUnusable,
  type InputIssue,
  type SchemaBudgets,
  type SchemaOfTool,
} from './schema-compiler.js';

/** What the API or worker asks the schema thread (tool-input.ts sends these). */
export type SchemaQuestion =
  | { kind: 'schemas'; tools: SchemaOfTool[]; budgets: SchemaBudgets }
  | {
      kind: 'input';
      schema: Record<string, unknown>;
      input: unknown;
      budgets: { compileMs: number; checkMs: number };
    };

export type SchemaRequest = { id: number } & SchemaQuestion;

export type SchemaReply = { id: number } & (
  | { kind: 'schemas'; problem: string | null }
  | { kind: 'input'; issues: InputIssue[] }
  /** The schema cannot check input: why. */
  | { kind: 'unusable'; reason: string }
  /** Something of ours went wrong. */
  | { kind: 'failed'; message: string }
);

function answer(request: SchemaRequest): SchemaReply {
  const { id } = request;
  try {
    if (request.kind === 'schemas') {
      return { id, kind: 'schemas', problem: schemasProblem(request.tools, request.budgets) };
    }
    return {
      id,
      kind: 'input',
      issues: inputIssues(request.schema, request.input, request.budgets),
    };
  } catch (error) {
    if (error instanceof SchemaUnusable) return { id, kind: 'unusable', reason: error.message };
    return { id, kind: 'failed', message: error instanceof Error ? error.message : 'unknown' };
  }
}

// One request at a time, in order: each runs to its end (or its budget) before the next.
parentPort?.on('message', (request: SchemaRequest) => {
  parentPort?.postMessage(answer(request));
});
