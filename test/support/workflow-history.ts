import type { Client } from '@temporalio/client';

/**
 * A workflow's history as text with its payloads decoded, to search for what must never be
 * there (tokens, codes). Payload bytes come back as Uint8Array or base64 strings.
 */
export async function historyText(client: Client, workflowId: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return JSON.stringify(history, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8');
    return key === 'data' && typeof value === 'string'
      ? Buffer.from(value, 'base64').toString('utf8')
      : value;
  });
}
