import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, as a test reads it. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** What to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** Every request body received, as sent: what a secret must never appear in. */
  bodies(): string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

/** OTLP/JSON ids are hex; tolerate base64 too (the protobuf JSON mapping). */
function hex(id: string | undefined): string {
  if (!id) return '';
  return /^[\da-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

function valueOf(value: OtlpValue): unknown {
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

function attributes(list: { key: string; value: OtlpValue }[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * A stand-in for an OpenTelemetry collector: takes OTLP/HTTP JSON at `/v1/traces`, as the
 * service's exporter sends it, and keeps every span.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      try {
        const parsed = JSON.parse(body) as OtlpExport;
        for (const resource of parsed.resourceSpans ?? []) {
          const service = String(attributes(resource.resource?.attributes)['service.name']);
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                parentSpanId: hex(span.parentSpanId),
                name: span.name,
                attributes: attributes(span.attributes),
              });
            }
          }
        }
      } catch {
        // Not JSON: kept in `bodies` all the same.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${String(port)}`,
    spans: () => [...spans],
    bodies: () => [...bodies],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
