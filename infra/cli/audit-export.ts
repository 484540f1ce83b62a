import { createWriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { z } from 'zod';
import {
  exportFilter,
  EXPORT_SETTLE_WAIT_MS,
  exportHorizon,
  writeAuditExport,
} from '../../activities/audit/export-ndjson.js';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import type { Sql } from '../database/client.js';

export interface ExportAuditOptions {
  out: string;
  env: string;
  since?: string;
  until?: string;
  user?: string;
  decision?: string;
}

/** The filters, checked as the API checks its query (README "Export the audit trail"). */
const filterOptions = z.object({
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  user: z.string().min(1).optional(),
  decision: z.enum(['allowed', 'blocked', 'denied', 'failed']).optional(),
});

/** Where an existing export file stands: the last line it holds in full, and what follows it. */
interface ExistingExport {
  /** The last complete line's cursor and environment; null for an empty file. */
  last: { cursor: string; environmentId: string } | null;
  /** The file's length up to the end of its last complete line: the rest is a partial line. */
  completeBytes: number;
  partialBytes: number;
}

const exportedLine = z.object({ cursor: z.string().regex(/^\d+$/), environment_id: z.string() });

/** Every export line starts so; a file that does not is not one, and is never truncated. */
const LINE_START = '{"time":"';
const CHUNK = 64 * 1024;

/**
 * Finds the last complete line of `file` reading backwards a chunk at a time, so a resumed export
 * reads its last line, never the whole file.
 */
async function readExisting(file: FileHandle, path: string): Promise<ExistingExport> {
  const size = (await file.stat()).size;
  if (size === 0) return { last: null, completeBytes: 0, partialBytes: 0 };
  const head = Buffer.alloc(Math.min(size, LINE_START.length));
  await file.read(head, 0, head.length, 0);
  if (!LINE_START.startsWith(head.toString('utf8'))) {
    throw new Error(`--out ${path} exists and is not an audit export: choose another file`);
  }
  // Read back from the end until the tail holds the last complete line whole: the newline that
  // ends it and the one before it (or the file's start).
  let tail = Buffer.alloc(0);
  let tailStart = size;
  let lastEnd = -1;
  let lineStart = -1;
  while (tailStart > 0) {
    const start = Math.max(0, tailStart - CHUNK);
    const chunk = Buffer.alloc(tailStart - start);
    await file.read(chunk, 0, chunk.length, start);
    tail = Buffer.concat([chunk, tail]);
    tailStart = start;
    lastEnd = tail.lastIndexOf(0x0a);
    if (lastEnd === -1) continue;
    const before = lastEnd === 0 ? -1 : tail.lastIndexOf(0x0a, lastEnd - 1);
    if (before !== -1 || tailStart === 0) {
      lineStart = before + 1;
      break;
    }
  }
  if (lastEnd === -1) return { last: null, completeBytes: 0, partialBytes: size };
  const line = tail.subarray(lineStart, lastEnd).toString('utf8');
  let parsed: z.infer<typeof exportedLine>;
  try {
    parsed = exportedLine.parse(JSON.parse(line) as unknown);
  } catch {
    throw new Error(`--out ${path}: its last complete line is not an exported audit event`);
  }
  const completeBytes = tailStart + lastEnd + 1;
  return {
    last: { cursor: parsed.cursor, environmentId: parsed.environment_id },
    completeBytes,
    partialBytes: size - completeBytes,
  };
}

/** The file as it stands, or nothing when it does not exist yet. */
async function existingExport(path: string): Promise<ExistingExport | null> {
  let file: FileHandle;
  try {
    file = await open(path, 'r+');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return null;
    throw error;
  }
  try {
    const existing = await readExisting(file, path);
    // The partial line of an interrupted export goes before anything is appended after it.
    if (existing.partialBytes > 0) await file.truncate(existing.completeBytes);
    return existing;
  } finally {
    await file.close();
  }
}

/**
 * `gatehouse audit export`: the environment's events as NDJSON into a file, the same lines as
 * `GET /v1/audit/export` streams, from a Postgres cursor with the file's backpressure. An existing
 * file is resumed after its last complete line (its partial last line removed first), so running
 * the same command again after an interruption completes the file.
 */
export async function exportAuditCommand(sql: Sql, options: ExportAuditOptions): Promise<string> {
  const filters = filterOptions.safeParse({
    since: options.since,
    until: options.until,
    user: options.user,
    decision: options.decision,
  });
  if (!filters.success) {
    throw new Error(
      filters.error.issues
        .map((issue) => `--${issue.path.map(String).join('.')}: ${issue.message}`)
        .join('; '),
    );
  }
  const environment = await findEnvironmentByName(sql, options.env);
  if (!environment) throw new Error(`no environment "${options.env}"`);
  const existing = await existingExport(options.out);
  const last = existing?.last ?? null;
  if (last && last.environmentId !== environment.id) {
    throw new Error(
      `--out ${options.out} holds an export of another environment: choose another file`,
    );
  }
  const horizon = await exportHorizon(
    sql,
    environment.id,
    EXPORT_SETTLE_WAIT_MS,
    last?.cursor ?? null,
  );
  if (horizon === null) {
    throw new Error(
      'a database transaction open when the export started has not ended, and it may hold audit events: run the same command again shortly',
    );
  }
  const file = createWriteStream(options.out, { flags: 'a' });
  // Held in an object: the listener sets it while the export is awaited.
  const outcome: { failure: Error | null } = { failure: null };
  file.on('error', (error) => {
    outcome.failure = error;
  });
  const written = await writeAuditExport(
    sql,
    environment.id,
    exportFilter({ ...filters.data, ...(last ? { cursor: last.cursor } : {}) }),
    horizon.upToSeq,
    file,
  );
  if (written.complete) {
    file.end();
    await finished(file).catch(() => undefined); // its error is outcome.failure
  }
  if (outcome.failure !== null || !written.complete) {
    throw new Error(
      `writing ${options.out} failed after ${String(written.lines)} lines: ${outcome.failure?.message ?? 'the file closed'}; run the same command again to resume`,
    );
  }
  const lines = `${String(written.lines)} line${written.lines === 1 ? '' : 's'}`;
  if (!last) {
    const removed = existing?.partialBytes ? ` (a partial line removed first)` : '';
    return `wrote ${lines} to ${options.out}: a new export${removed}`;
  }
  const removed = existing?.partialBytes
    ? `, its partial last line (${String(existing.partialBytes)} bytes) removed first`
    : '';
  return `wrote ${lines} to ${options.out}: resumed after cursor ${last.cursor}${removed}`;
}
