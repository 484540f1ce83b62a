import { Worker } from 'node:worker_threads';
import type { InputIssue, SchemaOfTool } from './schema-compiler.js';
import type { SchemaQuestion, SchemaReply, SchemaRequest } from './schema-thread.js';

export type { InputIssue } from './schema-compiler.js';

/**
 * A remote MCP tool's input schema: compiled when a listing is checked, and run
 * against a tool's input before any workflow starts and again when a held call runs. ajv
 * compiles synchronously, and what a server's schema costs to compile is the server's choice
 * (30 tools of ~62 KB each held the API's event loop 12 s per refresh, /healthz included), so
 * both are done in a worker thread of this process (schema-thread.ts), under budgets V8
 * enforces there: the event loop only waits for a message. The thread keeps the validators it
 * compiled, by the schema's hash, so a call checks input against the accepted schema without
 * compiling it again.
 */

/**
 * How long checking one input may take. A schema's `pattern` runs JavaScript's backtracking
 * regular expressions, and an accepted schema may hold one that backtracks exponentially on an
 * input the agent chooses. Past the budget the input is refused, never let through.
 */
export const TOOL_INPUT_BUDGET_MS = 100;

/** How long one tool's input schema may take to compile: real ones take milliseconds. */
export const SCHEMA_COMPILE_BUDGET_MS = 1_000;

/** How long a whole listing's input schemas may take to compile, together. */
export const LISTING_COMPILE_BUDGET_MS = 10_000;

/** A schema that cannot check input; the message says why. */
export class ToolSchemaUnusable extends Error {
  override name = 'ToolSchemaUnusable';
}

/**
 * Past every budget a request can have, plus room for a loaded machine: a thread silent for
 * this long is stuck in something V8's budget does not stop, and is replaced.
 */
const STUCK_AFTER_MS = LISTING_COMPILE_BUDGET_MS + 20_000;

/** An idle thread is ended, and made again when next needed (its validators with it). */
const IDLE_MS = 120_000;

interface Waiting {
  resolve: (reply: SchemaReply) => void;
  reject: (error: Error) => void;
}

/** The schema thread: started when first asked, one request at a time, answers by id. */
class SchemaThread {
  #worker: Worker | null = null;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;
  #stuck: NodeJS.Timeout | undefined;
  #idle: NodeJS.Timeout | undefined;

  ask(question: SchemaQuestion): Promise<SchemaReply> {
    const worker = this.#started();
    const id = ++this.#next;
    clearTimeout(this.#idle);
    if (this.#waiting.size === 0) this.#watch();
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ ...question, id } satisfies SchemaRequest);
    });
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./schema-thread-entry.mjs', import.meta.url));
    worker.on('message', (reply: SchemaReply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) this.#rest(worker);
      else this.#watch();
      waiting?.resolve(reply);
    });
    worker.on('error', (error) => {
      this.#end(worker, new Error(`the schema thread failed: ${error.message}`));
    });
    worker.on('exit', () => {
      this.#end(worker, new Error('the schema thread stopped'));
    });
    this.#worker = worker;
    return worker;
  }

  /** Expects an answer within STUCK_AFTER_MS of the last one. */
  #watch(): void {
    clearTimeout(this.#stuck);
    this.#stuck = setTimeout(() => {
      const worker = this.#worker;
      if (!worker) return;
      this.#end(worker, new Error('the schema thread did not answer; it was restarted'));
      void worker.terminate();
    }, STUCK_AFTER_MS);
    this.#stuck.unref();
  }

  #rest(worker: Worker): void {
    clearTimeout(this.#stuck);
    // Nothing waits for it: it must not keep the process alive.
    worker.unref();
    this.#idle = setTimeout(() => {
      this.#end(worker, new Error('the schema thread was idle'));
      void worker.terminate();
    }, IDLE_MS);
    this.#idle.unref();
  }

  #end(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    clearTimeout(this.#stuck);
    clearTimeout(this.#idle);
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const one of waiting) one.reject(error);
  }
}

const thread = new SchemaThread();

function unexpected(reply: SchemaReply): Error {
  return new Error(
    reply.kind === 'failed'
      ? `checking the schema failed: ${reply.message}`
      : `the schema thread answered ${reply.kind}`,
  );
}

/**
 * Why one of these tools' input schemas cannot be used, naming the first such tool ("gives the
 * tool … an input schema Gatehouse cannot use: …"), or null when every one compiles within its
 * budget and all within the listing's.
 */
export async function toolSchemasProblem(tools: readonly SchemaOfTool[]): Promise<string | null> {
  const reply = await thread.ask({
    kind: 'schemas',
    tools: tools.map(({ name, inputSchema }) => ({ name, inputSchema })),
    budgets: { toolMs: SCHEMA_COMPILE_BUDGET_MS, listingMs: LISTING_COMPILE_BUDGET_MS },
  });
  if (reply.kind !== 'schemas') throw unexpected(reply);
  return reply.problem;
}

/**
 * Every problem of `input` against the tool's schema, each naming its field; empty if none.
 * Throws ToolSchemaUnusable when the schema cannot check input (it no longer compiles, or not
 * within its budget).
 */
export async function toolInputIssues(
  schema: Record<string, unknown>,
  input: unknown,
): Promise<InputIssue[]> {
  const reply = await thread.ask({
    kind: 'input',
    schema,
    input,
    budgets: { compileMs: SCHEMA_COMPILE_BUDGET_MS, checkMs: TOOL_INPUT_BUDGET_MS },
  });
  if (reply.kind === 'unusable') throw new ToolSchemaUnusable(reply.reason);
  if (reply.kind !== 'input') throw unexpected(reply);
  return reply.issues;
}
