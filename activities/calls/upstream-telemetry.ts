import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ApplicationFailure } from '@temporalio/activity';
import { upstreamDuration, upstreamRequests } from '../../infra/telemetry/metrics.js';
import { gatehouseTracer } from '../../infra/telemetry/tracing.js';

/**
 * One request to an app, as its trace and metrics see it: a client span under the activity's
 * span, and the app's status and latency counted per app. Method, app and status only: never the
 * URL (a proxied path or query may carry anything) nor a header (the credential is one).
 */
export async function observedUpstream(
  app: string,
  method: string,
  send: () => Promise<Response>,
): Promise<Response> {
  return gatehouseTracer().startActiveSpan(
    `upstream ${app}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': method, 'gatehouse.app': app },
    },
    async (span) => {
      const started = performance.now();
      try {
        const response = await send();
        span.setAttribute('http.response.status_code', response.status);
        if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        upstreamRequests.inc({ app, status: String(response.status) });
        upstreamDuration.observe({ app }, (performance.now() - started) / 1000);
        return response;
      } catch (error) {
        // The failure's type (upstream_timeout, upstream_unreachable), never its message.
        const type = error instanceof ApplicationFailure ? (error.type ?? 'error') : 'error';
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
        upstreamRequests.inc({ app, status: type });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
