import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** OpenTelemetry's workflow interceptors: a span per workflow run, Update and scheduled activity. */
const tracingInterceptors = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/**
 * Bundles the workflow sources for the worker's sandbox. Our imports name `.js` files (ESM
 * TypeScript convention) that exist as `.ts`, so webpack is told to try both.
 *
 * The tracing interceptors only when tracing is on: in the sandbox they make spans for every
 * workflow task, Update and activity whether or not anything exports them, which doubled the
 * worker's CPU per call (README, "Performance"). They add headers and sink calls, never
 * commands, so a history made with them replays without them and the other way round.
 */
export async function bundleWorkflows(
  options: { tracing: boolean } = { tracing: false },
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: options.tracing ? [tracingInterceptors] : [],
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
    }),
    logger: new DefaultLogger('WARN'),
  });
}
