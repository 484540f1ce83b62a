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
 */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    // In every bundle, tracing on or off, so that one bundle replays every history; the worker
    // gives their spans a sink either way (worker/tracing-options.ts).
    workflowInterceptorModules: [tracingInterceptors],
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
    }),
    logger: new DefaultLogger('WARN'),
  });
}
