import postgres from 'postgres';

/** The one way processes get a Postgres handle. Columns are snake_case in SQL, camelCase in TS. */
export type Sql = postgres.Sql<Record<string, unknown>>;

export function createSql(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    // Column names only: JSON values (policies, audit bodies, app responses) keep their own keys.
    transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
    // Notices (e.g. "relation already exists, skipping") are expected during migrations.
    onnotice: () => undefined,
    connection: { application_name: 'gatehouse' },
  });
}

/** A handle that may be the pool or an open transaction (`sql.begin(tx => …)`). */
export type Db = Sql | postgres.TransactionSql<Record<string, unknown>>;
