import { describe, expect, it } from '@jest/globals';
import { defaultPayloadConverter, type SerializationContext } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { PayloadEncryptionCodec, isEncrypted } from '../../infra/temporal/payload-codec.js';

const codec = new PayloadEncryptionCodec({ current: { id: 'k1', key: randomBytes(32) } });
const nexus: SerializationContext = {
  type: 'workflow',
  namespace: 'default',
  workflowId: 'nexus/test/0190…',
};

async function sealed(value: unknown, context: SerializationContext): Promise<boolean> {
  const [payload] = await codec.encode([defaultPayloadConverter.toPayload(value)], context);
  return payload ? isEncrypted(payload) : false;
}

describe('the codec and Nexus answers', () => {
  it('leaves clear the answer a Nexus caller receives, in its workflow’s own payloads only', async () => {
    expect(await sealed({ ok: true, data: { id: 't_1' } }, nexus)).toBe(false);
    expect(await sealed({ ok: false, data: 'no', upstream_status: 422 }, nexus)).toBe(false);
    expect(await sealed({ error: { code: 'denied_by_policy', message: 'no' } }, nexus)).toBe(false);
  });

  it('seals the same shapes anywhere else, and every other payload of a Nexus workflow', async () => {
    const call: SerializationContext = { ...nexus, workflowId: 'call/test/acme.create_task/ab' };
    const activity: SerializationContext = {
      type: 'activity',
      namespace: 'default',
      workflowId: nexus.workflowId,
      isLocal: false,
    };
    expect(await sealed({ ok: true, data: {} }, call)).toBe(true);
    expect(await sealed({ ok: true, data: {} }, activity)).toBe(true);
    expect(await sealed({ ok: true, data: {}, input: { title: 'x' } }, nexus)).toBe(true);
    expect(await sealed({ caller: {}, request: { user: 'u_1' } }, nexus)).toBe(true);
    expect(await sealed({ error: 'text' }, nexus)).toBe(true);
  });
});
