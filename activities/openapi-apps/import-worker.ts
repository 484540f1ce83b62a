import { parentPort, workerData } from 'node:worker_threads';
import type { ImportRequest, OpenApiImport } from './descriptors.js';
import { importDocument } from './import-document.js';
import { OpenApiImportError, type ImportField, type ImportLimit } from './limits.js';

/** What the import worker answers, once, before it ends. */
export type ImportReply =
  | { kind: 'imported'; imported: OpenApiImport }
  | { kind: 'refused'; message: string; field: ImportField; limit: ImportLimit | null }
  /** Something of ours went wrong. */
  | { kind: 'failed'; message: string };

function answer(request: ImportRequest): ImportReply {
  try {
    return { kind: 'imported', imported: importDocument(request) };
  } catch (error) {
    if (error instanceof OpenApiImportError) {
      return { kind: 'refused', message: error.message, field: error.field, limit: error.limit };
    }
    return { kind: 'failed', message: error instanceof Error ? error.message : 'unknown' };
  }
}

parentPort?.postMessage(answer(workerData as ImportRequest));
