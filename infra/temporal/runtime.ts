import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { Logger } from '../logger.js';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Sends the SDK's own logs (worker state, workflow and activity logs) through our pino logger. */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly logger: Logger) {}
  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.logger[levels[level]]({ ...meta, component: 'temporal-sdk' }, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/**
 * Installs the worker runtime once per process, with its Prometheus endpoint on
 * `metricsBindAddress` when given. `handleSignals` is false where the process stops
 * its own services in order (`gatehouse dev`, tests); the standalone worker lets the SDK drain
 * on SIGINT/SIGTERM.
 */
export function installTemporalRuntime(
  logger: Logger,
  options: { handleSignals: boolean; metricsBindAddress?: string },
): void {
  Runtime.install({
    logger: new PinoTemporalLogger(logger),
    shutdownSignals: options.handleSignals ? ['SIGINT', 'SIGTERM'] : [],
    // The SDK core's own lines too (warnings and up, as by default): without forwarding it
    // prints them to stderr itself, in its own format, past the log file and the dev
    // terminal's one line per record.
    telemetryOptions: {
      logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
      // The SDK's own metrics (task slots, schedule-to-start latency, task failures, polls),
      // served by the core in Prometheus format; the worker's METRICS_ADDRESS passes them on.
      ...(options.metricsBindAddress
        ? { metrics: { prometheus: { bindAddress: options.metricsBindAddress } } }
        : {}),
    },
  });
}
