import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  defaultPayloadConverter,
  type Payload,
  type SerializationContext,
} from '@temporalio/common';
import type { Keyring } from '../../infra/encryption.js';
import {
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
  PayloadEncryptionCodec,
  WORKFLOW_ID_METADATA,
  sealedWorkflowId,
} from '../../infra/temporal/payload-codec.js';

const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const metadata = (payload: Payload, name: string) => text(payload.metadata?.[name]);

function ring(id: string, previous: Record<string, Buffer> = {}): Keyring {
  return { current: { id, key: randomBytes(32) }, previous };
}

const SECRET = 'card 4242 4242 4242 4242, set-cookie: sid=s3cr3t';
const callInput = {
  target: { kind: 'action', action: 'acme.create_task', input: { title: SECRET } },
  headers: { 'x-custom': SECRET },
};

async function sealOne(
  codec: PayloadEncryptionCodec,
  value: unknown,
  context?: SerializationContext,
): Promise<Payload> {
  const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(value)], context);
  if (!sealed) throw new Error('no payload');
  return sealed;
}

async function openOne(codec: PayloadEncryptionCodec, payload: Payload): Promise<unknown> {
  const [opened] = await codec.decode([payload]);
  if (!opened) throw new Error('no payload');
  return defaultPayloadConverter.fromPayload(opened);
}

describe('the payload codec', () => {
  it('seals a payload, metadata included, and opens it to the same value', async () => {
    const keyring = ring('k1');
    const codec = new PayloadEncryptionCodec(keyring);
    const sealed = await sealOne(codec, callInput);

    expect(metadata(sealed, 'encoding')).toBe(ENCRYPTED_ENCODING);
    expect(metadata(sealed, KEY_ID_METADATA)).toBe('k1');
    expect(Object.keys(sealed.metadata ?? {}).sort()).toEqual(['encoding', KEY_ID_METADATA]);
    for (const clue of [SECRET, 'sid=s3cr3t', 'acme.create_task', 'json/plain']) {
      expect(text(sealed.data)).not.toContain(clue);
      expect(Buffer.from(sealed.data ?? []).toString('base64')).not.toContain(
        Buffer.from(clue).toString('base64'),
      );
    }
    expect(await openOne(codec, sealed)).toEqual(callInput);
  });

  it('keeps binary data and every metadata entry exactly', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const original: Payload = {
      metadata: {
        encoding: Buffer.from('binary/plain'),
        messageType: Buffer.from('temporal.api.sdk.v1.Example'),
        odd: Uint8Array.of(0, 255, 10),
      },
      data: randomBytes(70_000),
    };
    const [sealed] = await codec.encode([original]);
    const [opened] = await codec.decode([sealed ?? {}]);
    expect(opened?.metadata).toEqual(original.metadata);
    expect(Buffer.from(opened?.data ?? [])).toEqual(Buffer.from(original.data ?? []));
  });

  it('never seals two payloads alike, so equal inputs cannot be recognised', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const [a, b] = await Promise.all([sealOne(codec, callInput), sealOne(codec, callInput)]);
    expect(Buffer.from(a.data ?? [])).not.toEqual(Buffer.from(b.data ?? []));
  });

  it('never repeats an IV under one derived key (formats 2 and 3: salt and key per process, IV per payload)', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const sealed = await Promise.all(Array.from({ length: 200 }, () => sealOne(codec, callInput)));
    const data = sealed.map((payload) => Buffer.from(payload.data ?? []));
    expect(new Set(data.map((bytes) => bytes[0]))).toEqual(new Set([3]));
    // One salt (one key derivation) serves them all; each has its own IV.
    expect(new Set(data.map((bytes) => bytes.subarray(1, 33).toString('hex'))).size).toBe(1);
    expect(new Set(data.map((bytes) => bytes.subarray(33, 45).toString('hex'))).size).toBe(200);
    for (const payload of sealed.slice(0, 5))
      expect(await openOne(codec, payload)).toEqual(callInput);
  });

  it('opens a payload sealed in format 1 (a key per payload), as older histories hold', async () => {
    // Sealed by the format 1 codec under a key of 32 bytes of 7, id k1.
    const formatOne: Payload = {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from('k1'),
      },
      data: Buffer.from(
        'AZOZFzF2V9C1h2VOkwjiT10dGuMBhnGBR/54jlTxY6POHny0/F/V16wGJ7JzQ4cQxX87Lk996N0HT5/YUy5eRqIwcdcQroDK1U6borf76pgX307mCDui5sMBBapDiT/K2lw0As+k6SMDezzy',
        'base64',
      ),
    };
    const codec = new PayloadEncryptionCodec({ current: { id: 'k1', key: Buffer.alloc(32, 7) } });
    expect(await openOne(codec, formatOne)).toEqual({ sealed: 'by format 1' });
    const altered = Buffer.from(formatOne.data ?? []);
    altered[40] = (altered[40] ?? 0) ^ 1;
    await expect(codec.decode([{ ...formatOne, data: altered }])).rejects.toThrow(
      PayloadDecryptionError,
    );
  });

  it('opens a payload sealed in format 2 (a key per process and salt), as older histories hold', async () => {
    // Sealed by the format 2 codec under a key of 32 bytes of 7, id k1.
    const formatTwo: Payload = {
      metadata: {
        encoding: Buffer.from(ENCRYPTED_ENCODING),
        [KEY_ID_METADATA]: Buffer.from('k1'),
      },
      data: Buffer.from(
        'AmLi6u4wd8zWajJvpsSy5vgXdvibNlCM5vDzUhem7TC7TRfrw9FU62/6+RXQ0uquGYEs3O+BSZnrFJ0OQea/bTAUkVmX4GC/kFKZD3dp8elqAhwgzhOeVDyeUcfpW7KFFmFHQ703tPJOb49adVP6MCI95yuPv8xW',
        'base64',
      ),
    };
    const codec = new PayloadEncryptionCodec({ current: { id: 'k1', key: Buffer.alloc(32, 7) } });
    expect(await openOne(codec, formatTwo)).toEqual({ sealed: 'by format 2' });
    // It names no workflow: nothing proves which one it belongs to.
    expect(sealedWorkflowId(formatTwo)).toBeNull();
    // A workflow id added to its metadata afterwards is not taken for an owner.
    const labelled = {
      ...formatTwo,
      metadata: { ...formatTwo.metadata, [WORKFLOW_ID_METADATA]: Buffer.from('call/x/y/z') },
    };
    expect(sealedWorkflowId(labelled)).toBeNull();
  });

  it('names the workflow that owns a payload, in clear metadata bound to the ciphertext (format 3)', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const owner = 'call/staging/acme.create_task/abc123';
    const workflow: SerializationContext = {
      type: 'workflow',
      namespace: 'default',
      workflowId: owner,
    };
    const sealed = await sealOne(codec, callInput, workflow);
    expect(Buffer.from(sealed.data ?? [])[0]).toBe(3);
    expect(metadata(sealed, WORKFLOW_ID_METADATA)).toBe(owner);
    expect(sealedWorkflowId(sealed)).toBe(owner);
    // An activity's payload belongs to the workflow that scheduled it.
    const activity: SerializationContext = {
      type: 'activity',
      namespace: 'default',
      workflowId: 'refresh/0190',
      activityId: '1',
      isLocal: false,
    };
    expect(sealedWorkflowId(await sealOne(codec, callInput, activity))).toBe('refresh/0190');
    // Without a workflow (an operator's encode at the codec endpoint) it names none.
    const unowned = await sealOne(codec, callInput);
    expect(sealedWorkflowId(unowned)).toBeNull();
    expect(Object.keys(unowned.metadata ?? {}).sort()).toEqual(['encoding', KEY_ID_METADATA]);

    // Opening goes by the payload's own metadata, whatever the context says.
    expect(await openOne(codec, sealed)).toEqual(callInput);
    const [elsewhere] = await codec.decode([sealed], {
      type: 'workflow',
      namespace: 'default',
      workflowId: 'call/development/acme.create_task/other',
    });
    expect(defaultPayloadConverter.fromPayload(elsewhere ?? {})).toEqual(callInput);
    expect(await openOne(codec, unowned)).toEqual(callInput);
  });

  it('refuses a payload whose workflow was relabelled, removed or added', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const context: SerializationContext = {
      type: 'workflow',
      namespace: 'default',
      workflowId: 'call/development/acme.create_task/abc',
    };
    const sealed = await sealOne(codec, callInput, context);
    const unowned = await sealOne(codec, callInput);
    const withoutOwner = Object.fromEntries(
      Object.entries(sealed.metadata ?? {}).filter(([name]) => name !== WORKFLOW_ID_METADATA),
    );
    const relabelled: Payload[] = [
      {
        ...sealed,
        metadata: {
          ...sealed.metadata,
          [WORKFLOW_ID_METADATA]: Buffer.from('call/staging/acme.create_task/abc'),
        },
      },
      { ...sealed, metadata: withoutOwner },
      {
        ...unowned,
        metadata: { ...unowned.metadata, [WORKFLOW_ID_METADATA]: Buffer.from('call/staging/x/y') },
      },
    ];
    // Dressed as format 2, which names no workflow, it does not open either.
    const downgraded = Buffer.from(sealed.data ?? []);
    downgraded[0] = 2;
    relabelled.push({ metadata: withoutOwner, data: downgraded });
    for (const payload of relabelled) {
      await expect(codec.decode([payload])).rejects.toThrow(PayloadDecryptionError);
    }
  });

  it('lets a payload written before the codec through unchanged (calls in flight at the upgrade)', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const clear = defaultPayloadConverter.toPayload(callInput);
    const nothing = defaultPayloadConverter.toPayload(undefined);
    const [decodedClear, decodedNothing] = await codec.decode([clear, nothing]);
    expect(decodedClear).toBe(clear);
    expect(decodedNothing).toBe(nothing);
    expect(defaultPayloadConverter.fromPayload(decodedClear ?? {})).toEqual(callInput);
  });

  it('opens a payload sealed under a previous key after a rotation, and seals under the new one', async () => {
    const before = ring('k1');
    const sealedBefore = await sealOne(new PayloadEncryptionCodec(before), callInput);

    const after = ring('k2', { k1: before.current.key });
    const codec = new PayloadEncryptionCodec(after);
    expect(await openOne(codec, sealedBefore)).toEqual(callInput);
    const sealedAfter = await sealOne(codec, callInput);
    expect(metadata(sealedAfter, KEY_ID_METADATA)).toBe('k2');
    // A process still on the old ring cannot open it; one that dropped k1 cannot open the old.
    await expect(new PayloadEncryptionCodec(before).decode([sealedAfter])).rejects.toThrow(
      PayloadDecryptionError,
    );
    await expect(new PayloadEncryptionCodec(ring('k2')).decode([sealedBefore])).rejects.toThrow(
      /key id "k1", which is not in the key ring/,
    );
  });

  it('refuses a payload that was altered: its bytes, its key id, or its length', async () => {
    const keyring = ring('k1', { k0: randomBytes(32) });
    const codec = new PayloadEncryptionCodec(keyring);
    const sealed = await sealOne(codec, callInput);
    const data = Buffer.from(sealed.data ?? []);

    const altered: Payload[] = [];
    for (const at of [0, 1, 40, data.length - 20, data.length - 1]) {
      const copy = Buffer.from(data);
      copy[at] = (copy[at] ?? 0) ^ 0x01;
      altered.push({ ...sealed, data: copy });
    }
    altered.push({ ...sealed, data: data.subarray(0, data.length - 1) });
    altered.push({ ...sealed, data: data.subarray(0, 20) });
    altered.push({
      metadata: { ...sealed.metadata, [KEY_ID_METADATA]: Buffer.from('k0') },
      data,
    });
    altered.push({ metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING) }, data });

    for (const payload of altered) {
      await expect(codec.decode([payload])).rejects.toThrow(PayloadDecryptionError);
    }
    // Failures name what is wrong, never a key.
    const failure = await codec.decode([altered[2] ?? {}]).catch((error: unknown) => error);
    expect(String(failure)).not.toContain(keyring.current.key.toString('base64'));
  });

  it('does not seal a payload twice', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const sealed = await sealOne(codec, callInput);
    const [again] = await codec.encode([sealed]);
    expect(again).toBe(sealed);
  });

  it('leaves the call summary and the UI metadata query clear, and nothing that only resembles them', async () => {
    const codec = new PayloadEncryptionCodec(ring('k1'));
    const summary = defaultPayloadConverter.toPayload(
      'acme.create_task for user u_123, agent billing-bot',
    );
    // What the SDK answers to the UI's `__temporal_workflow_metadata` query.
    const workflowMetadata = defaultPayloadConverter.toPayload({
      definition: {
        type: 'governedCall',
        queryDefinitions: [],
        signalDefinitions: [{ name: 'cancel' }],
        updateDefinitions: [{ name: 'call' }, { name: 'decide' }],
      },
      currentDetails: 'Waiting for approval 0190 until 2030-01-01T00:00:00.000Z.',
    });
    const [summaryOut, metadataOut] = await codec.encode([summary, workflowMetadata]);
    expect(summaryOut).toBe(summary);
    expect(metadataOut).toBe(workflowMetadata);

    const lookalikes = [
      SECRET,
      'acme.create_task for user u_123',
      `acme.create_task for user u_1, agent a\n${SECRET}`,
      { definition: { type: 'governedCall' }, currentDetails: 'x', input: SECRET },
      { definition: { type: 'governedCall' }, currentDetails: SECRET.length },
      { currentDetails: 'x', definition: SECRET },
    ];
    const sealed = await codec.encode(lookalikes.map((v) => defaultPayloadConverter.toPayload(v)));
    for (const payload of sealed) expect(metadata(payload, 'encoding')).toBe(ENCRYPTED_ENCODING);
    // A string that is not valid JSON is sealed, not a reason to fail.
    const [broken] = await codec.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"unterminated') },
    ]);
    expect(metadata(broken ?? {}, 'encoding')).toBe(ENCRYPTED_ENCODING);
  });
});
