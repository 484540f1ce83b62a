import { randomBytes } from 'node:crypto';
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { gatehouseTracer } from '../../infra/telemetry/tracing.js';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/** The id without tracing: the caller's W3C trace id, or a fresh one of the same form. */
function untracedId(traceparent: string | undefined): string {
  const incoming = TRACEPARENT.exec(traceparent ?? '')?.[1];
  return incoming && !/^0+$/.test(incoming) ? incoming : randomBytes(16).toString('hex');
}

/**
 * Gives every request a trace id, echoed in `X-Trace-Id`, written in its log lines and its audit
 * event. A caller's W3C `traceparent` is honoured so traces join across services. With tracing
 * on (README, "Observe it") the request is the trace's server span and the id is its trace id,
 * so an auditor goes from an audit event to the call's trace; the span is the active context
 * for everything the request does, the Temporal client's headers included. Its attributes are
 * the method, the route pattern and the status: never the URL, whose path may hold a link token.
 */
export const traceId: RequestHandler = (req, res, next) => {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = gatehouseTracer().startSpan(
    `${req.method} request`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
    parent,
  );
  const spanContext = span.spanContext();
  const id =
    span.isRecording() && isSpanContextValid(spanContext)
      ? spanContext.traceId
      : untracedId(req.get('traceparent'));
  res.locals.traceId = id;
  res.setHeader('X-Trace-Id', id);
  if (span.isRecording()) {
    res.once('close', () => {
      const matched = req.route as { path?: unknown } | undefined;
      const route = typeof matched?.path === 'string' ? `${req.baseUrl}${matched.path}` : '';
      span.updateName(route ? `${req.method} ${route}` : `${req.method} request`);
      if (route) span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
  }
  context.with(trace.setSpan(parent, span), next);
};
