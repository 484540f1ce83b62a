import { trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** The tracer Gatehouse's own spans (the API request, the upstream request) come from. */
export const TRACER_NAME = 'gatehouse';

/** Gatehouse's tracer: a no-op one until `startTracing` registers a provider. */
export function gatehouseTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** A process's tracing, on: where its spans and the workflow sandbox's go. */
export interface Tracing {
  tracer: Tracer;
  /** Workflow spans come out of the sandbox through a sink and are handed to this processor. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Sends what is still batched, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this process when an OTLP endpoint is configured (README, "Observe it"):
 * spans batched and sent as OTLP/HTTP JSON to `<endpoint>/v1/traces`, context carried by
 * AsyncLocalStorage and W3C `traceparent`. Off (null) otherwise: the OpenTelemetry API then
 * hands out no-op spans, which cost next to nothing.
 */
export function startTracing(options: {
  endpoint: string | null;
  serviceName: string;
}): Tracing | null {
  if (!options.endpoint) return null;
  const resource = new Resource({ 'service.name': options.serviceName });
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }),
  );
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new W3CTraceContextPropagator(),
  });
  return {
    tracer: provider.getTracer(TRACER_NAME),
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}
