/** Where the Temporal UI's links for a call point (README, "Watch the calls in the Temporal UI"). */
export interface CallLinkBase {
  /** PUBLIC_URL: the audit event is `GET <publicUrl>/v1/audit/<event id>` (with a key). */
  publicUrl: string;
  /** TRACE_URL_TEMPLATE, `{trace_id}` standing for the trace id; null: the id alone. */
  traceUrlTemplate: string | null;
}

/** Where a trace is seen: TRACE_URL_TEMPLATE with `{trace_id}` replaced by the id. */
export function traceUrl(template: string, traceId: string): string {
  return template.replaceAll('{trace_id}', encodeURIComponent(traceId));
}

/**
 * The call workflow's static details (markdown, shown under its summary in the Temporal UI): the
 * audit event and the trace of the request that started it, so an operator goes from the
 * workflow to what the auditor and the tracer see. Ids only: never the input or a credential.
 */
export function callDetails(
  base: CallLinkBase,
  request: { requestId: string; traceId: string },
): string {
  const audit = `${base.publicUrl}/v1/audit/${request.requestId}`;
  const trace = base.traceUrlTemplate
    ? `[${request.traceId}](${traceUrl(base.traceUrlTemplate, request.traceId)})`
    : `\`${request.traceId}\``;
  return [
    `Started by request ${request.requestId}:`,
    `- audit event: [${request.requestId}](${audit})`,
    `- trace: ${trace}`,
  ].join('\n');
}
