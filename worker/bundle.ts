import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * Bundles the workflow sources for the worker's sandbox. Our imports name `.js` files (ESM
 * TypeScript convention) that exist as `.ts`, so webpack is told to try both.
 */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } },
    }),
    logger: new DefaultLogger('WARN'),
  });
}
