// `node --import tsx infra/tools/main.ts`: installs the pinned Temporal binaries if needed and
// prints where they are. Failures print only the message: it already says what to fix.
import { ensureTemporalBinaries } from './temporal-binaries.js';

try {
  const { cli, testServer } = await ensureTemporalBinaries();
  console.log(`temporal: ${cli}`);
  console.log(`temporal-test-server: ${testServer}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
}
