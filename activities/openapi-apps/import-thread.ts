import { Worker } from 'node:worker_threads';
import type { ImportRequest, OpenApiImport } from './descriptors.js';
import { IMPORT_LIMITS, OpenApiImportError, overLimit } from './limits.js';
import type { ImportReply } from './import-worker.js';

/**
 * Imports an OpenAPI document off the caller's event loop: in a worker thread of its own, one
 * import at a time in this process, with a V8 heap of IMPORT_LIMITS.importHeapMb and terminated
 * after IMPORT_LIMITS.importMs. Parsing (JSON.parse, the YAML parser), expanding references and
 * compiling input schemas are synchronous and their cost is the document's choice; a worker
 * bounds all of them at once, memory included (which node:vm's time budget, withinCpuBudget,
 * cannot), and the caller only waits for one message. A fresh worker per import: nothing of one
 * document (ajv's compiled schemas) stays to weigh on the next, and a terminated import leaves
 * nothing half-done behind.
 *
 * Only the size is checked here, before the document is copied to the worker: a document past
 * IMPORT_LIMITS.documentBytes never reaches a parser. What the caller gets back is bounded by
 * IMPORT_LIMITS.importBytes, so receiving it costs the event loop a bounded copy.
 *
 * Resolves with the import; rejects with OpenApiImportError (the document's fault, naming the
 * limit where it is one) or another Error (ours).
 */
export async function importOpenApi(request: ImportRequest): Promise<OpenApiImport> {
  const bytes =
    typeof request.document === 'string'
      ? Buffer.byteLength(request.document)
      : request.document.byteLength;
  if (bytes > IMPORT_LIMITS.documentBytes) {
    const mib = (value: number) => `${(value / (1024 * 1024)).toFixed(1)} MiB`;
    throw overLimit(
      'document_bytes',
      `the document is ${mib(bytes)}, more than the ${mib(IMPORT_LIMITS.documentBytes)} an OpenAPI document may be`,
    );
  }
  const turn = queue.then(() => inWorker(request));
  // The next import waits for this one to end, however it ends.
  queue = turn.then(
    () => undefined,
    () => undefined,
  );
  return turn;
}

let queue: Promise<void> = Promise.resolve();

function inWorker(request: ImportRequest): Promise<OpenApiImport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./import-thread-entry.mjs', import.meta.url), {
      workerData: request,
      resourceLimits: {
        maxOldGenerationSizeMb: IMPORT_LIMITS.importHeapMb,
        maxYoungGenerationSizeMb: 64,
      },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      void worker.terminate();
    };
    const timer = setTimeout(() => {
      settle(() => {
        reject(
          overLimit(
            'import_time',
            `importing the document took longer than ${String(IMPORT_LIMITS.importMs / 1000)} s`,
          ),
        );
      });
    }, IMPORT_LIMITS.importMs);
    worker.on('message', (reply: ImportReply) => {
      settle(() => {
        if (reply.kind === 'imported') resolve(reply.imported);
        else if (reply.kind === 'refused') {
          reject(new OpenApiImportError(reply.message, reply.field, reply.limit));
        } else reject(new Error(`importing the document failed: ${reply.message}`));
      });
    });
    worker.on('error', (error: Error & { code?: string }) => {
      settle(() => {
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? overLimit(
                'import_memory',
                `importing the document needed more than ${String(IMPORT_LIMITS.importHeapMb)} MB of memory`,
              )
            : new Error(`the import worker failed: ${error.message}`),
        );
      });
    });
    worker.on('exit', (code) => {
      settle(() => {
        reject(
          new Error(`the import worker stopped (exit code ${String(code)}) without answering`),
        );
      });
    });
  });
}
