import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';

function isPayload(value: unknown): value is Payload {
  return (
    typeof value === 'object' &&
    value !== null &&
    'metadata' in value &&
    typeof value.metadata === 'object' &&
    value.metadata !== null
  );
}

/** Replaces every payload in the history, at any depth, by what the client's codecs decode. */
async function decodePayloads(client: Client, node: unknown): Promise<unknown> {
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  if (Array.isArray(node)) return Promise.all(node.map((item) => decodePayloads(client, item)));
  if (isPayload(node)) {
    let payloads: Payload[] = [node];
    try {
      for (const codec of [...codecs].reverse()) payloads = await codec.decode(payloads);
    } catch {
      // Sealed under another key: a workflow of another test file (they share one server).
      return node;
    }
    return payloads[0];
  }
  if (typeof node === 'object' && node !== null && !(node instanceof Uint8Array)) {
    const entries = await Promise.all(
      Object.entries(node).map(async ([key, value]) => [key, await decodePayloads(client, value)]),
    );
    return Object.fromEntries(entries) as unknown;
  }
  return node;
}

/**
 * A workflow's history as text with its payloads decoded — through the client's codecs first,
 * so checks for what must never be there (tokens, codes) see the plain values, not ciphertext
 * that would pass them trivially. Payload bytes come back as Uint8Array or base64 strings.
 */
export async function historyText(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const decoded = await decodePayloads(client, history);
  return JSON.stringify(decoded, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8');
    return key === 'data' && typeof value === 'string'
      ? Buffer.from(value, 'base64').toString('utf8')
      : value;
  });
}

/** Every payload of a workflow's history as Temporal stores it (sealed ones stay sealed). */
export async function storedPayloads(client: Client, workflowId: string): Promise<Payload[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const found: Payload[] = [];
  const visit = (node: unknown): void => {
    if (isPayload(node)) {
      found.push(node);
    } else if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (typeof node === 'object' && node !== null && !(node instanceof Uint8Array)) {
      Object.values(node).forEach(visit);
    }
  };
  visit(history);
  return found;
}

/** The first argument a workflow was started with, decoded as its worker received it. */
export async function startArgumentOf(client: Client, workflowId: string): Promise<unknown> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const payload =
    history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`${workflowId} has no start argument`);
  let payloads = [payload];
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return payloadConverter.fromPayload(payloads[0] as Payload);
}
