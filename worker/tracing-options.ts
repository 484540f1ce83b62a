import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetryWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../infra/telemetry/tracing.js';

type TracingSinks = InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;

/**
 * The worker's part of the call's trace (README, "Observe it"). The workflow interceptors are in
 * every bundle (worker/bundle.ts), so the sandbox's spans always have a sink to go to: with
 * tracing off it drops them, with it on they join the activities' spans, each activity (local
 * ones too) a child of the workflow span that scheduled it, through Temporal headers.
 */
export function workerTracingOptions(
  tracing: Tracing | null,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing) {
    const sinks: TracingSinks = { exporter: { export: { fn: () => undefined } } };
    return { sinks };
  }
  const { tracer } = tracing;
  const sinks: TracingSinks = {
    exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource),
  };
  return {
    sinks,
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
  };
}
