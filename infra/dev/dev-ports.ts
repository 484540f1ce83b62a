import { freePort } from './free-port.js';
import type { LocalState } from './local-state.js';

export interface DevPorts {
  postgres: number;
  temporal: number;
  temporalUi: number;
  api: number;
  demoApp: number;
}

/** A preferred port that was taken, and the free one used instead. */
export interface ReplacedPort {
  /** What listens there, as the banner names it ("API", "Temporal UI", …). */
  service: string;
  preferred: number;
  actual: number;
}

const SERVICES: Record<keyof DevPorts, string> = {
  postgres: 'Postgres',
  temporal: 'Temporal',
  temporalUi: 'Temporal UI',
  api: 'API',
  demoApp: 'Demo app',
};

/**
 * The ports of the local stack: the preferred ones when free, else any free port. Every
 * replacement is reported, because anything written for the default (the README's examples, a
 * bookmark, a script) would silently reach whatever holds it. An `API_PORT` that is set is the
 * user's own choice, never replaced; services that run elsewhere (`skip`) need no port.
 */
export async function pickDevPorts(
  state: LocalState,
  options: { apiPort?: number; skip?: readonly (keyof DevPorts)[] } = {},
): Promise<{ ports: DevPorts; replaced: ReplacedPort[] }> {
  const preferred: DevPorts = {
    postgres: state.postgres.port,
    temporal: state.temporal.port,
    temporalUi: state.temporal.uiPort,
    api: state.api.port,
    demoApp: state.demoApp.port,
  };
  const ports = { ...preferred };
  const replaced: ReplacedPort[] = [];
  for (const name of Object.keys(preferred) as (keyof DevPorts)[]) {
    if (options.skip?.includes(name)) continue;
    if (name === 'api' && options.apiPort !== undefined) {
      ports.api = options.apiPort;
      continue;
    }
    ports[name] = await freePort(preferred[name]);
    if (ports[name] !== preferred[name]) {
      replaced.push({ service: SERVICES[name], preferred: preferred[name], actual: ports[name] });
    }
  }
  return { ports, replaced };
}
