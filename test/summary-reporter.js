// @ts-check
import process from 'node:process';

// Ends the run with one plain line, "Tests: N passed, N failed", that CI tooling can read
// whatever the runner; jest's own summary stays above it. Then where the run's log lines went
// (test/support/test-log.ts): the workers' warnings and the Temporal SDK's stay out of the output.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped ? `, ${skipped} skipped` : '';
    process.stdout.write(
      `Tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${tail}\n` +
        'Log of the run (workers, Temporal SDK): .data/logs/test-run.log\n',
    );
  }
}
