/**
 * `gatehouse dev` with another stack's Temporal server appearing on its Temporal port between
 * the port's choice and its own server's start, as a second `gatehouse dev` started moments
 * earlier does. Prints `intruder <address>` once that server serves, and stops it when the stack
 * stops. Run as `node --import tsx test/support/dev-intruding-temporal.ts`, like `gatehouse dev`.
 */
import { runDev } from '../../infra/cli/dev.js';
import {
  startTemporalDevServer,
  type TemporalDevServer,
} from '../../infra/dev/temporal-dev-server.js';
import { resolveTemporalCli } from '../../infra/tools/temporal-binaries.js';

let intruder: TemporalDevServer | undefined;
try {
  await runDev({
    onPortsChosen: async (ports) => {
      intruder = await startTemporalDevServer({
        cli: await resolveTemporalCli(),
        port: ports.temporal,
        uiPort: null,
        namespace: 'default',
      });
      console.log(`intruder ${intruder.address}`);
    },
  });
} finally {
  await intruder?.stop();
}
