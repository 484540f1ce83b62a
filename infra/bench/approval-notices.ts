import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startTestSmtpServer } from '../../test/support/smtp-server.js';
import { setGroupRoles } from '../../activities/db/role-mappings.js';
import { ensureEnvironment } from '../../activities/db/environments.js';
import { summarize, type Measurement } from './measure.js';
import type { BenchStack } from './stack.js';

/**
 * What telling approvers costs (`--only notify`): held calls of the bench agent, one at a time,
 * first with no notification channel (the held answer alone), then with an SMTP relay on
 * loopback and a route e-mailing the one approver: the held answer again (the notices run after
 * it, in the call's workflow, so it should not move), and from the held answer to the approval
 * e-mail accepted by the relay.
 */

export interface ApprovalNoticesResult {
  rounds: number;
  /** The held 403, no channel set. */
  heldWithout: Measurement;
  /** The held 403, with the e-mail channel and route set. */
  heldWith: Measurement;
  /** From the held 403 to the relay accepting the approval e-mail. */
  heldToEmail: Measurement;
}

/** Past it a round counts as an error: no e-mail that takes this long is working. */
const EMAIL_TIMEOUT_MS = 30_000;
const APPROVER = 'approver@bench.example';

export async function approvalNoticesScenario(
  stack: BenchStack,
  rounds: number,
  log: (line: string) => void,
): Promise<ApprovalNoticesResult> {
  const api = stack.apiUrls[0] ?? '';
  const hold = async (): Promise<{ ms: number; held: boolean }> => {
    const started = performance.now();
    const response = await fetch(`${api}/v1/actions/acme.create_task/run`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.key}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ user: stack.user, input: { title: `notice ${randomUUID()}` } }),
    });
    await response.arrayBuffer();
    return { ms: performance.now() - started, held: response.status === 403 };
  };

  const without: number[] = [];
  let withoutErrors = 0;
  log(`approval notices: ${String(rounds)} held calls, no channel`);
  const startedWithout = performance.now();
  for (let i = 0; i < rounds; i += 1) {
    const { ms, held } = await hold();
    if (held) without.push(ms);
    else withoutErrors += 1;
  }
  const heldWithout = summarize(without, withoutErrors, performance.now() - startedWithout);

  const smtp = await startTestSmtpServer();
  try {
    const environment = await ensureEnvironment(stack.sql, 'bench');
    // The default policy asks any approver: this address is one, so each held call e-mails it.
    await setGroupRoles(stack.sql, environment.id, `person:${APPROVER}`, ['approver']);
    const put = async (path: string, body: unknown) => {
      const response = await fetch(`${api}${path}`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${stack.approverKey}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
      if (response.status !== 200) {
        throw new Error(`PUT ${path}: ${String(response.status)} ${await response.text()}`);
      }
    };
    await put('/v1/notification-channels/email', {
      host: smtp.host,
      port: smtp.port,
      security: 'none',
      sender_address: 'approvals@bench.example',
    });
    await put(`/v1/notification-routes/${encodeURIComponent('*')}/email`, {
      targets: [{ each_person: true }],
    });

    const heldMs: number[] = [];
    const emailMs: number[] = [];
    let errors = 0;
    log(`approval notices: ${String(rounds)} held calls, each e-mailing the approver`);
    const startedWith = performance.now();
    for (let i = 0; i < rounds; i += 1) {
      // Each round sends one e-mail: the next one the relay takes is this round's, watched from
      // before the call so that one arriving as the answer is read is seen when it arrives.
      const arrival = smtp.message(smtp.messages.length + 1).then(() => performance.now());
      const { ms, held } = await hold();
      const answeredAt = performance.now();
      if (!held) {
        errors += 1;
        continue;
      }
      heldMs.push(ms);
      let timer: NodeJS.Timeout | undefined;
      const arrivedAt = await Promise.race([
        arrival,
        new Promise<null>((resolve) => {
          timer = setTimeout(() => {
            resolve(null);
          }, EMAIL_TIMEOUT_MS);
        }),
      ]);
      clearTimeout(timer);
      if (arrivedAt === null) errors += 1;
      else emailMs.push(Math.max(0, arrivedAt - answeredAt));
    }
    const elapsed = performance.now() - startedWith;
    return {
      rounds,
      heldWithout,
      heldWith: summarize(heldMs, errors, elapsed),
      heldToEmail: summarize(emailMs, errors, elapsed),
    };
  } finally {
    await smtp.stop();
  }
}

export function approvalNoticesTable(result: ApprovalNoticesResult): string {
  const row = (name: string, m: Measurement) =>
    `${name.padEnd(34)} ${String(m.requests).padStart(6)} ${String(m.errors).padStart(6)} ${m.p50.toFixed(1).padStart(8)} ${m.p90.toFixed(1).padStart(8)} ${m.p99.toFixed(1).padStart(8)}`;
  return [
    `${'approval notices'.padEnd(34)} ${'n'.padStart(6)} ${'errors'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p90 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`,
    row('held answer, no channel', result.heldWithout),
    row('held answer, e-mail channel set', result.heldWith),
    row('held answer → e-mail at the relay', result.heldToEmail),
    '',
  ].join('\n');
}
