import { html, type Html } from '../../connect/pages/html.js';

/**
 * What will run once approved, shown whole: an action's input as JSON, or the proxy request as it
 * will be sent. Every value is escaped by `html`; nothing in a request is ever markup.
 */
export function requestDetails(request: Record<string, unknown>): Html {
  return typeof request.method === 'string' ? proxyRequest(request) : actionInput(request);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function json(value: unknown): Html {
  return html`<pre><code>${JSON.stringify(value ?? null, null, 2)}</code></pre>`;
}

function actionInput(request: Record<string, unknown>): Html {
  return html`<section class="part" aria-labelledby="request-title">
    <h2 id="request-title">Input that will run</h2>
    ${json(request.input)}
  </section>`;
}

/** A header value is text, or (bytes that could not be stored as text) base64. */
function headerValue(value: unknown): Html | string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const { encoding, content } = value as Record<string, unknown>;
    if (encoding === 'base64' && typeof content === 'string') {
      return html`<code>${content}</code> (bytes, shown as base64)`;
    }
  }
  return '';
}

function headerTable(headers: unknown): Html {
  const entries =
    headers !== null && typeof headers === 'object'
      ? Object.entries(headers as Record<string, unknown>)
      : [];
  if (entries.length === 0) return html`<p class="none">No headers are forwarded.</p>`;
  return html`<table class="headers">
    <tbody>
      ${entries.map(
        ([name, value]) =>
          html`<tr>
            <th scope="row">${name}</th>
            <td>${headerValue(value)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

interface ShownBody {
  bytes: number;
  sha256: string;
  encoding: 'utf8' | 'base64';
  content: string;
  truncated: boolean;
}

function isShownBody(value: unknown): value is ShownBody {
  if (value === null || typeof value !== 'object') return false;
  const body = value as Record<string, unknown>;
  return (
    typeof body.bytes === 'number' &&
    typeof body.sha256 === 'string' &&
    typeof body.content === 'string' &&
    (body.encoding === 'utf8' || body.encoding === 'base64')
  );
}

function bodyPart(request: Record<string, unknown>): Html {
  const { body } = request;
  if (isShownBody(body)) {
    const note = body.truncated
      ? html` · only the first ${Buffer.byteLength(body.content, body.encoding)} bytes are shown`
      : null;
    return html`<p class="measure">
        ${body.bytes} bytes · sha256
        <code>${body.sha256}</code
        >${body.encoding === 'base64' ? ' · binary, shown as base64' : null}${note}
      </p>
      <pre><code>${body.content}</code></pre>`;
  }
  // Older approvals recorded the body's size only.
  if (typeof request.body_bytes === 'number' && request.body_bytes > 0) {
    return html`<p class="measure">${request.body_bytes} bytes (not recorded)</p>`;
  }
  return html`<p class="none">No body.</p>`;
}

function proxyRequest(request: Record<string, unknown>): Html {
  const query = text(request.query);
  return html`<section class="part" aria-labelledby="request-title">
    <h2 id="request-title">Request that will be sent</h2>
    <p class="line">
      <code
        ><strong>${text(request.method)}</strong>
        /${text(request.path)}${query ? `?${query}` : ''}</code
      >
    </p>
    <h3>Forwarded headers</h3>
    ${headerTable(request.headers)}
    <h3>Body</h3>
    ${bodyPart(request)}
  </section>`;
}
