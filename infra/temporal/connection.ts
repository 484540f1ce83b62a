import { readFile } from 'node:fs/promises';
import type { Tracer } from '@opentelemetry/api';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config.js';
import type { Keyring } from '../encryption.js';
import { encryptedDataConverter } from './payload-codec.js';

type TemporalConfig = Config['temporal'];

interface ConnectionSettings {
  address: string;
  tls?: { clientCertPair?: { crt: Buffer; key: Buffer } } | boolean;
  apiKey?: string;
}

async function settings(config: TemporalConfig): Promise<ConnectionSettings> {
  const base: ConnectionSettings = { address: config.address };
  if (config.apiKey) base.apiKey = config.apiKey;
  if (config.tlsCertPath && config.tlsKeyPath) {
    const [crt, key] = await Promise.all([
      readFile(config.tlsCertPath),
      readFile(config.tlsKeyPath),
    ]);
    base.tls = { clientCertPair: { crt, key } };
  } else if (config.tls) {
    base.tls = true;
  }
  return base;
}

/**
 * The API's handle on Temporal: starts, updates and signals workflows. The key ring is required,
 * so no client can be made that writes call data in the clear or cannot read the worker's answers.
 * With a `tracer` (tracing on), each start, Update and signal is a span whose context travels to
 * the workflow in Temporal headers, beside the payloads, never in them.
 */
export async function connectClient(
  config: TemporalConfig,
  keyring: Keyring,
  options: { tracer?: Tracer } = {},
): Promise<Client> {
  const connection = await Connection.connect(await settings(config));
  const { tracer } = options;
  return new Client({
    connection,
    namespace: config.namespace,
    dataConverter: encryptedDataConverter(keyring),
    ...(tracer
      ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] } }
      : {}),
  });
}

/** The worker's connection (the Rust core's own gRPC client). */
export async function connectWorker(config: TemporalConfig): Promise<NativeConnection> {
  return NativeConnection.connect(await settings(config));
}
