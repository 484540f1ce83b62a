import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  randomBytes,
  type DecipherGCM,
  type KeyObject,
} from 'node:crypto';
import type {
  DataConverter,
  Payload,
  PayloadCodec,
  SerializationContext,
} from '@temporalio/common';
import { isNexusWorkflowId } from '../../workflows/nexus/run-action-types.js';
import type { Keyring } from '../encryption.js';

/**
 * Temporal payloads sealed with AES-256-GCM under the tokens' key ring: call inputs, app
 * answers and forwarded headers travel through workflow histories, which anyone with Temporal
 * access can read. The key id sits in the clear metadata, so after a rotation (new
 * `ENCRYPTION_KEY_ID`, the old key in `ENCRYPTION_PREVIOUS_KEYS`) old payloads still open.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
/**
 * The workflow a payload belongs to, in the clear so that the codec endpoint can tell
 * whose environment it is before opening anything, and bound to the ciphertext so that it cannot
 * be relabelled. Absent when the payload was sealed outside any workflow (an operator's encode).
 */
export const WORKFLOW_ID_METADATA = 'gatehouse-workflow-id';

/** First byte of a sealed payload's data, so the layout can change without guessing. */
const FORMAT_V1 = 1;
const FORMAT_V2 = 2;
/** Format 2's layout and keys, with the owning workflow in the associated data. */
const FORMAT_V3 = 3;
const SALT_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const LENGTH_BYTES = 4;
/**
 * Payload keys are derived from the ring key and a random salt, and labelled apart from the keys
 * that seal tokens. Payloads are far more numerous than tokens: under one key with random IVs,
 * GCM's safe budget (2^32 messages) would be spent in days at a few thousand payloads a second.
 *
 * Format 1 derived a key and IV for every payload: one HKDF per payload, about 6% of a worker's
 * CPU under load. Format 2 derives a key per process and salt, uses it for at most
 * SALT_USES payloads with random 96-bit IVs (far inside the budget), then draws a new salt;
 * openers cache the few keys in use. Format 3 keeps format 2's keys and layout and
 * binds the owning workflow into the associated data. Format 1 and 2 payloads still open.
 */
const HKDF_INFO = Buffer.from('gatehouse/temporal-payload/v1', 'utf8');
const HKDF_INFO_V2 = Buffer.from('gatehouse/temporal-payload/v2', 'utf8');
const SALT_USES = 1 << 24;
/** Keys an opener keeps: a few per process whose payloads it reads. */
const OPEN_KEY_CACHE = 256;

const textDecoder = new TextDecoder('utf-8', { fatal: false });

function metadataText(payload: Payload, name: string): string | undefined {
  const value = payload.metadata?.[name];
  // Buffer.from: sandbox-made payloads may hold another realm's typed array or a plain array.
  return value ? textDecoder.decode(Buffer.from(value)) : undefined;
}

export function isEncrypted(payload: Payload): boolean {
  return metadataText(payload, 'encoding') === ENCRYPTED_ENCODING;
}

/**
 * The static summary the API gives each call workflow (`api/temporal/call-workflows.ts`):
 * `<action> for user <user>, agent <agent>`. The SDK passes it through the codec like any
 * payload, but an operator should read it in the UI without decoding, and it holds nothing
 * the search attributes do not already show. Anything else stays sealed: a summary that changes
 * shape is merely sealed too, never a payload let through.
 */
const CALL_SUMMARY = /^[a-z0-9_-]+\.[a-z0-9_-]+ for user [^\n]{1,300}, agent [^\n]{1,300}$/;

/**
 * The answer to the UI's `__temporal_workflow_metadata` query: the workflow's handler names and
 * its current details ("Waiting for approval … until …"), which the UI shows as is.
 */
function isWorkflowMetadata(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value).sort();
  if (keys.length !== 2 || keys[0] !== 'currentDetails' || keys[1] !== 'definition') return false;
  const { definition, currentDetails } = value as Record<string, unknown>;
  return (
    typeof currentDetails === 'string' &&
    typeof definition === 'object' &&
    definition !== null &&
    typeof (definition as Record<string, unknown>).type === 'string'
  );
}

/** Payloads left clear on purpose: operator labels the UI shows undecoded, with no call data. */
export function isOperatorLabel(payload: Payload): boolean {
  if (metadataText(payload, 'encoding') !== 'json/plain' || !payload.data) return false;
  const data = Buffer.from(payload.data);
  // Only a short JSON string, or an object that opens with "definition", can qualify: nothing
  // else is parsed just to find out.
  const summary = data[0] === 0x22 && data.length <= 1024;
  const metadata =
    data[0] === 0x7b && textDecoder.decode(data.subarray(0, 14)) === '{"definition":';
  if (!summary && !metadata) return false;
  let value: unknown;
  try {
    value = JSON.parse(textDecoder.decode(data));
  } catch {
    return false;
  }
  return summary
    ? typeof value === 'string' && CALL_SUMMARY.test(value)
    : isWorkflowMetadata(value);
}

/** `{ok, data}` with an optional `upstream_status`: an action's answer, as REST gives it. */
function isActionResult(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value).sort();
  const base = keys[0] === 'data' && keys[1] === 'ok' && typeof value.ok === 'boolean';
  if (keys.length === 2) return base;
  return (
    base &&
    keys.length === 3 &&
    keys[2] === 'upstream_status' &&
    typeof value.upstream_status === 'number'
  );
}

/** `{error: {code, message, …}}`: the REST error envelope. */
function isErrorEnvelope(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value);
  const error = value.error;
  if (keys.length !== 1 || typeof error !== 'object' || error === null) return false;
  const { code, message } = error as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string';
}

/**
 * What a Nexus caller receives: the result, or the failure's details, of the
 * workflow behind a `gatehouse.runAction` operation. Temporal hands the caller's namespace these
 * payloads as they are stored, and the caller cannot open Gatehouse's seal, so they stay clear:
 * only in that workflow's own payloads (the context says whose), and only in the two shapes a
 * REST caller reads in its HTTP body. The operation's input, and every activity payload, are
 * sealed as everywhere else.
 */
export function isNexusAnswer(
  payload: Payload,
  context: SerializationContext | undefined,
): boolean {
  if (context?.type !== 'workflow' || !isNexusWorkflowId(context.workflowId)) return false;
  if (metadataText(payload, 'encoding') !== 'json/plain' || !payload.data) return false;
  const data = Buffer.from(payload.data);
  if (data[0] !== 0x7b) return false;
  let value: unknown;
  try {
    value = JSON.parse(textDecoder.decode(data));
  } catch {
    return false;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return isActionResult(record) || isErrorEnvelope(record);
}

function derive(ringKey: Buffer, salt: Buffer): { key: Buffer; iv: Buffer } {
  const material = Buffer.from(hkdfSync('sha256', ringKey, salt, HKDF_INFO, KEY_BYTES + IV_BYTES));
  return { key: material.subarray(0, KEY_BYTES), iv: material.subarray(KEY_BYTES) };
}

interface SealingKey {
  keyId: string;
  salt: Buffer;
  key: KeyObject;
  uses: number;
}

/** The format 2 key of this process for one ring key, drawn afresh every SALT_USES payloads. */
const sealingKeys = new WeakMap<Buffer, SealingKey>();
const openingKeys = new Map<string, KeyObject>();

function deriveV2(ringKey: Buffer, salt: Buffer): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', ringKey, salt, HKDF_INFO_V2, KEY_BYTES)));
}

function sealingKey(keyId: string, ringKey: Buffer): SealingKey {
  let current = sealingKeys.get(ringKey);
  if (!current || current.keyId !== keyId || current.uses >= SALT_USES) {
    const salt = randomBytes(SALT_BYTES);
    current = { keyId, salt, key: deriveV2(ringKey, salt), uses: 0 };
    sealingKeys.set(ringKey, current);
  }
  current.uses++;
  return current;
}

function openingKey(keyId: string, ringKey: Buffer, salt: Buffer): KeyObject {
  const name = `${keyId}:${salt.toString('base64')}`;
  let key = openingKeys.get(name);
  if (!key) {
    // Salts come from payloads, which anyone with Temporal access can write: the cache is bounded.
    if (openingKeys.size >= OPEN_KEY_CACHE) openingKeys.clear();
    key = deriveV2(ringKey, salt);
    openingKeys.set(name, key);
  }
  return key;
}

/** The key id is bound to the ciphertext, so a payload relabelled with another id never opens. */
function associatedData(keyId: string): Buffer {
  return Buffer.from(`gatehouse/temporal-payload/v1:${keyId}`, 'utf8');
}

/**
 * Format 3 binds the owning workflow too, or its absence: a payload whose workflow id was
 * changed, removed or added never opens. JSON keeps the two fields apart whatever they hold.
 */
function associatedDataV3(keyId: string, workflowId: string | null): Buffer {
  return Buffer.from(JSON.stringify(['gatehouse/temporal-payload/v3', keyId, workflowId]), 'utf8');
}

/**
 * The whole inner payload is sealed, its metadata included (encoding, message type): length of
 * the metadata as JSON (4 bytes, big-endian), that JSON (values in base64), then the data as is,
 * so a 1 MiB body costs no base64 growth against Temporal's payload size limit.
 */
function frame(payload: Payload): Buffer {
  const metadata = Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([name, value]) => [
      name,
      Buffer.from(value).toString('base64'),
    ]),
  );
  const metadataJson = Buffer.from(JSON.stringify(metadata), 'utf8');
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32BE(metadataJson.length);
  // Payloads made inside the workflow sandbox may carry their bytes as another realm's typed
  // array, or as a plain array of numbers: Buffer.from takes either.
  return Buffer.concat([length, metadataJson, Buffer.from(payload.data ?? [])]);
}

function unframe(plain: Buffer): Payload {
  const length = plain.readUInt32BE(0);
  const metadataJson = plain.subarray(LENGTH_BYTES, LENGTH_BYTES + length).toString('utf8');
  const metadata = JSON.parse(metadataJson) as Record<string, string>;
  return {
    metadata: Object.fromEntries(
      Object.entries(metadata).map(([name, value]) => [
        name,
        new Uint8Array(Buffer.from(value, 'base64')),
      ]),
    ),
    data: new Uint8Array(plain.subarray(LENGTH_BYTES + length)),
  };
}

export class PayloadDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

/**
 * Format 3: version, salt, IV, ciphertext, tag, as format 2; the owning workflow, when there is
 * one, in the metadata and the associated data.
 */
export function sealPayload(
  keyring: Keyring,
  payload: Payload,
  workflowId: string | null = null,
): Payload {
  const { id, key: ringKey } = keyring.current;
  const { salt, key } = sealingKey(id, ringKey);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedDataV3(id, workflowId));
  const body = Buffer.concat([cipher.update(frame(payload)), cipher.final()]);
  const metadata: Record<string, Uint8Array> = {
    encoding: new Uint8Array(Buffer.from(ENCRYPTED_ENCODING, 'utf8')),
    [KEY_ID_METADATA]: new Uint8Array(Buffer.from(id, 'utf8')),
  };
  if (workflowId !== null) {
    metadata[WORKFLOW_ID_METADATA] = new Uint8Array(Buffer.from(workflowId, 'utf8'));
  }
  return {
    metadata,
    data: new Uint8Array(
      Buffer.concat([Buffer.of(FORMAT_V3), salt, iv, body, cipher.getAuthTag()]),
    ),
  };
}

/**
 * The workflow a sealed payload says it belongs to: only format 3 names one (older payloads
 * name none, whatever their metadata says). The claim is proven only by the payload opening.
 */
export function sealedWorkflowId(payload: Payload): string | null {
  if (!isEncrypted(payload)) return null;
  const first = payload.data?.[0];
  if (first !== FORMAT_V3) return null;
  return metadataText(payload, WORKFLOW_ID_METADATA) ?? null;
}

/** The cipher that opens a sealed payload, and where its ciphertext starts. */
function opener(
  keyId: string,
  ringKey: Buffer,
  sealed: Buffer,
): { decipher: DecipherGCM; start: number } {
  const keyPerSalt = sealed[0] === FORMAT_V2 || sealed[0] === FORMAT_V3;
  if (keyPerSalt && sealed.length >= 1 + SALT_BYTES + IV_BYTES + TAG_BYTES) {
    const salt = sealed.subarray(1, 1 + SALT_BYTES);
    const iv = sealed.subarray(1 + SALT_BYTES, 1 + SALT_BYTES + IV_BYTES);
    const key = openingKey(keyId, ringKey, salt);
    return {
      decipher: createDecipheriv('aes-256-gcm', key, iv),
      start: 1 + SALT_BYTES + IV_BYTES,
    };
  }
  if (sealed[0] === FORMAT_V1 && sealed.length >= 1 + SALT_BYTES + TAG_BYTES) {
    const { key, iv } = derive(ringKey, sealed.subarray(1, 1 + SALT_BYTES));
    return { decipher: createDecipheriv('aes-256-gcm', key, iv), start: 1 + SALT_BYTES };
  }
  throw new PayloadDecryptionError('an encrypted payload of an unknown format');
}

export function openPayload(keyring: Keyring, payload: Payload): Payload {
  const keyId = metadataText(payload, KEY_ID_METADATA);
  if (!keyId) throw new PayloadDecryptionError('an encrypted payload without a key id');
  const ringKey = keyId === keyring.current.id ? keyring.current.key : keyring.previous?.[keyId];
  if (!ringKey) {
    throw new PayloadDecryptionError(
      `a payload sealed under key id "${keyId}", which is not in the key ring (ENCRYPTION_KEY_ID, ENCRYPTION_PREVIOUS_KEYS)`,
    );
  }
  const sealed = Buffer.from(payload.data ?? new Uint8Array());
  const { decipher, start } = opener(keyId, ringKey, sealed);
  decipher.setAAD(
    sealed[0] === FORMAT_V3
      ? associatedDataV3(keyId, metadataText(payload, WORKFLOW_ID_METADATA) ?? null)
      : associatedData(keyId),
  );
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  let plain: Buffer;
  try {
    plain = Buffer.concat([
      decipher.update(sealed.subarray(start, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw new PayloadDecryptionError('an encrypted payload failed authentication (altered?)');
  }
  return unframe(plain);
}

/**
 * The codec of every Temporal client and worker Gatehouse makes. The SDK tells it, at every
 * boundary, which workflow the payloads belong to (SerializationContext: the workflow itself, or
 * the one that scheduled an activity); each payload is sealed naming it, so the codec endpoint
 * can keep environments apart. Decoding goes by the payload's own metadata, never the
 * context, and lets anything not sealed through unchanged: histories written before the codec
 * (calls in flight at the upgrade) stay readable, and so do the operator labels it leaves clear.
 */
export class PayloadEncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  // Async for the interface: a payload that fails to open is a rejection, never a throw.
  // eslint-disable-next-line @typescript-eslint/require-await
  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const workflowId = context?.workflowId ?? null;
    return payloads.map((payload) =>
      isEncrypted(payload) || isOperatorLabel(payload) || isNexusAnswer(payload, context)
        ? payload
        : sealPayload(this.keyring, payload, workflowId),
    );
  }

  // The context is not needed: a payload says which key and workflow it was sealed with.
  // eslint-disable-next-line @typescript-eslint/require-await
  async decode(payloads: Payload[], _context?: SerializationContext): Promise<Payload[]> {
    return payloads.map((payload) =>
      isEncrypted(payload) ? openPayload(this.keyring, payload) : payload,
    );
  }
}

export function encryptedDataConverter(keyring: Keyring): DataConverter {
  return { payloadCodecs: [new PayloadEncryptionCodec(keyring)] };
}
