import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino, type DestinationStream } from 'pino';
import { createLogger, type Logger } from '../../infra/logger.js';
import { installTemporalRuntime } from '../../infra/temporal/runtime.js';

/**
 * Where a test run's logs go (README, "Test it"): the workers' warnings, the Temporal SDK's and
 * its core's. The test output keeps to what a developer reads there, PASS and FAIL lines and the
 * failures themselves; this file has the rest, emptied when a run starts.
 */
export const TEST_LOG = fileURLToPath(new URL('../../.data/logs/test-run.log', import.meta.url));

let destination: DestinationStream | undefined;

/** Synchronous appends: jest's workers write here at once, and nothing waits to be flushed. */
function testLogStream(): DestinationStream {
  if (!destination) {
    mkdirSync(path.dirname(TEST_LOG), { recursive: true });
    destination = pino.destination({ dest: TEST_LOG, append: true, sync: true });
  }
  return destination;
}

/** A logger of the service (same fields, same redaction) that writes to the run's log file. */
export function testLogger(level = 'warn'): Logger {
  return createLogger({ level }, testLogStream());
}

/**
 * The Temporal runtime of a jest worker process, installed once per process: the SDK's logs and
 * its core's (which would otherwise print straight to the terminal), warnings and up, to the
 * run's log file.
 */
export function installTestRuntime(): void {
  try {
    installTemporalRuntime(testLogger('warn'), { handleSignals: false });
  } catch {
    // Installed by an earlier test file in this jest worker process.
  }
}
