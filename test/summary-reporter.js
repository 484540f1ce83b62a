// @ts-check
import process from 'node:process';

// Ends the run with one plain line, "Tests: N passed, N failed", that CI tooling can read
// whatever the runner; jest's own summary stays above it.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped ? `, ${skipped} skipped` : '';
    process.stdout.write(
      `Tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${tail}\n`,
    );
  }
}
