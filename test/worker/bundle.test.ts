import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { testEnv } from '../support/stack-env.js';

describe('the workflow bundle', () => {
  it('leaves the OpenTelemetry workflow interceptors out when tracing is off', async () => {
    // The tests' shared bundle is the one a worker without tracing builds (bundleWorkflows()).
    // In the sandbox those interceptors make spans on every workflow task whether or not anything
    // exports them, which doubled the worker's CPU per call.
    const code = await readFile(testEnv('workflowBundle'), 'utf8');
    expect(code).toContain('gatehouse'); // a real bundle of our workflows
    expect(code).not.toContain('@temporalio/interceptors-opentelemetry/lib/workflow');
  });
});
