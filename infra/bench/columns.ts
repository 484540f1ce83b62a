export type Row = [string, ...(string | number)[]];

/** Rows as aligned columns, the first row being the header. */
export function columns(rows: Row[]): string {
  const header = rows[0] ?? [];
  const widths = header.map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
  return rows
    .map((row) => row.map((cell, i) => String(cell).padEnd(widths[i] ?? 0)).join('  '))
    .join('\n');
}

/** a ÷ b to two decimals; 0 when there is no b. */
export const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 100) / 100);
