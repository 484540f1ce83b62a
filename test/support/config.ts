import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../infra/config.js';
import { testEnv } from './stack-env.js';

/** A complete configuration for a test file: its own database and task queue, the shared Temporal. */
export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: testEnv('temporalAddress'),
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(6).toString('hex')}`,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    API_PORT: '0',
    LOG_LEVEL: 'debug',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // The registry tests' MCP servers listen on loopback.
    MCP_APPS_ALLOW_PRIVATE: 'true',
    // A loaded 2-core machine may take seconds to start a workflow: tests of behaviour must not
    // meet the production deadline (10 s); the outage tests set their own, shorter one.
    REQUEST_DEADLINE_MS: '30000',
    ...overrides,
  });
}
