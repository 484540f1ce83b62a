/**
 * Runs the Acme Tasks demo app standalone for the local demo:
 *   node --import tsx infra/demo-app/main.ts
 * Env: DEMO_APP_PORT (default 4010), DEMO_APP_HOST (default 127.0.0.1), DEMO_APP_DATA_DIR
 * (persist state there), and DEMO_APP_CLIENT_ID / DEMO_APP_CLIENT_SECRET /
 * DEMO_APP_REDIRECT_URI (comma-separated) to register one OAuth client at start.
 */
import { pino } from 'pino';
import { startDemoApp, type DemoClient } from './index.js';

const env = process.env;
const logger = pino({ name: 'demo-app', level: env['LOG_LEVEL'] ?? 'info' });

function clientFromEnv(): DemoClient[] {
  const clientId = env['DEMO_APP_CLIENT_ID'];
  const clientSecret = env['DEMO_APP_CLIENT_SECRET'];
  const redirectUri = env['DEMO_APP_REDIRECT_URI'];
  if (!clientId || !clientSecret || !redirectUri) return [];
  const redirectUris = redirectUri.split(',').map((uri) => uri.trim());
  return [{ clientId, clientSecret, redirectUris }];
}

const app = await startDemoApp({
  port: Number(env['DEMO_APP_PORT'] ?? 4010),
  host: env['DEMO_APP_HOST'] ?? '127.0.0.1',
  dataDir: env['DEMO_APP_DATA_DIR'] || undefined,
  clients: clientFromEnv(),
  logger,
});
process.stdout.write(`Acme Tasks demo app listening on ${app.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'demo app failed to stop cleanly');
        process.exit(1);
      },
    );
  });
}
