/**
 * The caller's workflow interceptor: every Nexus operation its workflows start carries the
 * Gatehouse API key in `authorization`, as REST requests do. The key is compiled into the
 * caller's bundle (`gatehouse-caller-key`, a module the test's bundler points at a file it
 * writes), so it is no argument, memo or result of any workflow.
 */
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { gatehouseApiKey } from 'gatehouse-caller-key';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      startNexusOperation: (input, next) =>
        next({
          ...input,
          headers: { ...input.headers, authorization: `Bearer ${gatehouseApiKey}` },
        }),
    },
  ],
});
