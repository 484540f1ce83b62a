import type { DestinationStream } from 'pino';

/**
 * Notices that are known and decided upon (README, "Decisions recorded"), so repeating them on
 * every start would only scroll the banner away. They still reach the log file.
 */
const FILE_ONLY_NOTICES = [
  // oidc-provider 9 (the demo app) says so on Node 20, which this project supports and tests.
  /^oidc-provider WARNING: Unsupported runtime/,
];

/** Fields every record has, or that the line shows in its own place. */
const SHOWN_APART = new Set([
  'level',
  'time',
  'pid',
  'hostname',
  'name',
  'msg',
  'component',
  'err',
]);

const MAX_DETAIL = 240;

function clock(time: unknown): string {
  const date = typeof time === 'string' || typeof time === 'number' ? new Date(time) : new Date();
  const at = Number.isNaN(date.getTime()) ? new Date() : date;
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
}

function errorText(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null;
  const { type, message } = err as { type?: unknown; message?: unknown };
  return [type, message].filter((part) => typeof part === 'string' && part).join(': ') || null;
}

/**
 * One JSON log record as one readable terminal line, e.g.
 * `14:02:11 ERROR api: request failed (TypeError: …) {"trace_id":"…"}`; null for a record the
 * terminal leaves to the log file. Long details are cut: the file keeps the whole record.
 */
export function formatTerminalLine(line: string): string | null {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.trimEnd();
  }
  const message = typeof record.msg === 'string' ? record.msg : '';
  if (FILE_ONLY_NOTICES.some((notice) => notice.test(message))) return null;
  const level = (typeof record.level === 'string' ? record.level : 'log').toUpperCase();
  const component = typeof record.component === 'string' ? `${record.component}: ` : '';
  const error = errorText(record.err);
  const rest = Object.fromEntries(Object.entries(record).filter(([key]) => !SHOWN_APART.has(key)));
  let detail = Object.keys(rest).length ? JSON.stringify(rest) : '';
  if (detail.length > MAX_DETAIL)
    detail = `${detail.slice(0, MAX_DETAIL)}… (full record in the log file)`;
  return [
    `${clock(record.time)} ${level.padEnd(5)} ${component}${message}`,
    error ? `(${error})` : '',
    detail,
  ]
    .filter(Boolean)
    .join(' ');
}

/** A pino destination that writes each record to the terminal as `formatTerminalLine` shows it. */
export function terminalLogStream(out: NodeJS.WritableStream): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) {
        if (!line.trim()) continue;
        const shown = formatTerminalLine(line);
        if (shown !== null) out.write(`${shown}\n`);
      }
    },
  };
}
