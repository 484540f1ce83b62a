import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../api/client/webhooks.js';
import { generateWebhookSecret } from '../../activities/webhooks/signing-secret.js';

/**
 * The approval scenarios' webhook receiver, on loopback, set as the environment's endpoint. It
 * plays two parts, each on a verified delivery as a real receiver would act on it:
 * - the person: `approval.requested` → approves at once with the approver's key, so every way of
 *   waiting meets a decision made the moment the approval is announced;
 * - the backend of "retry after webhook": `approval.decided` → the waiting caller retries.
 */
export interface ApprovalPerson {
  /** Resolves when `approval.decided` for this approval has arrived (at once if it has). */
  decided(approvalId: string, timeoutMs: number): Promise<void>;
  /** Approvals the person could not approve (an approve that was not 200). */
  failures: number;
  stop(): Promise<void>;
}

export async function startApprovalPerson(options: {
  apiUrl: string;
  /** A full key of another agent than the caller's (four eyes). */
  approverKey: string;
}): Promise<ApprovalPerson> {
  const secret = generateWebhookSecret();
  const arrived = new Set<string>();
  const waiters = new Map<string, () => void>();
  let failures = 0;

  async function approve(approvalId: string): Promise<void> {
    const response = await fetch(`${options.apiUrl}/v1/approvals/${approvalId}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.approverKey}` },
    }).catch(() => null);
    await response?.arrayBuffer();
    if (response?.status !== 200) failures++;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let event;
      try {
        event = verifyWebhook(secret, Buffer.concat(chunks), req.headers);
      } catch {
        res.statusCode = 400;
        res.end();
        return;
      }
      // Answered first: Gatehouse's delivery does not wait for what the receiver does next.
      res.end('ok');
      const { id } = event.data.approval;
      if (event.type === 'approval.requested') {
        void approve(id);
        return;
      }
      arrived.add(id);
      waiters.get(id)?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const endpoint = await fetch(`${options.apiUrl}/v1/webhook-endpoint`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${options.approverKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${String(port)}/hooks/gatehouse`, secret }),
  });
  if (endpoint.status !== 200) {
    server.close();
    throw new Error(`setting the webhook endpoint failed: ${await endpoint.text()}`);
  }

  return {
    get failures() {
      return failures;
    },
    decided(approvalId, timeoutMs) {
      if (arrived.has(approvalId)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(approvalId);
          reject(new Error(`no approval.decided for ${approvalId} within ${String(timeoutMs)} ms`));
        }, timeoutMs);
        waiters.set(approvalId, () => {
          clearTimeout(timer);
          waiters.delete(approvalId);
          resolve();
        });
      });
    },
    async stop() {
      // Later scenarios run without deliveries, as the others did before this one.
      await fetch(`${options.apiUrl}/v1/webhook-endpoint`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${options.approverKey}` },
      }).then((response) => response.arrayBuffer());
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
