/** Names of the variables through which the global set-up hands its services to test files. */
export const TEST_ENV = {
  adminDatabaseUrl: 'GATEHOUSE_TEST_ADMIN_DATABASE_URL',
  /** A database migrated once for the run, which each test file's database is a copy of. */
  templateDatabase: 'GATEHOUSE_TEST_TEMPLATE_DATABASE',
  temporalAddress: 'GATEHOUSE_TEST_TEMPORAL_ADDRESS',
  workflowBundle: 'GATEHOUSE_TEST_WORKFLOW_BUNDLE',
  /** The run's WORKFLOW_BUNDLE_CACHE, filled by the set-up: spawned workers skip bundling. */
  workflowBundleCache: 'GATEHOUSE_TEST_WORKFLOW_BUNDLE_CACHE',
  dir: 'GATEHOUSE_TEST_DIR',
} as const;

export interface TestStack {
  stops: (() => Promise<void>)[];
}

export function testEnv(name: keyof typeof TEST_ENV): string {
  const value = process.env[TEST_ENV[name]];
  if (!value)
    throw new Error(
      `${TEST_ENV[name]} is not set: run the tests through jest's global set-up (npm test)`,
    );
  return value;
}
