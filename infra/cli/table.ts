/**
 * A list for people (a header row, columns aligned) or for scripts (`--json`: the records as a
 * JSON array, one stable shape to parse instead of columns).
 */
export function listOutput<T>(
  records: readonly T[],
  columns: readonly (readonly [header: string, cell: (record: T) => string])[],
  options: { json?: boolean; empty: string },
): string {
  if (options.json) return JSON.stringify(records, null, 2);
  if (records.length === 0) return options.empty;
  const rows = [
    columns.map(([header]) => header),
    ...records.map((record) => columns.map(([, cell]) => cell(record))),
  ];
  const widths = columns.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
    )
    .join('\n');
}
