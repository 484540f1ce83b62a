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
 * The worker's part of the call's trace (README, "Observe it"): the sandbox's spans (its bundle
 * has the workflow interceptors when tracing is on, worker/bundle.ts) join the activities'
 * spans, each activity (local ones too) a child of the workflow span that scheduled it, through
 * Temporal headers. Nothing when tracing is off.
 */
export function workerTracingOptions(
  tracing: Tracing | null,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing) return {};
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
