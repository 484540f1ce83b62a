import type { Server } from 'node:net';
import { bindServer, isAddressInUse } from './bind-port.js';
import { freePort } from './free-port.js';
import type { LocalState } from './local-state.js';
import { DevStartError } from './start-failure.js';

export interface DevPorts {
  postgres: number;
  temporal: number;
  temporalUi: number;
  api: number;
  demoApp: number;
  identityProvider: number;
  /** The mail catcher's SMTP server, and its web page. */
  mailSmtp: number;
  mail: number;
}

/** A preferred port that was taken, and the free one used instead. */
export interface ReplacedPort {
  /** What listens there, as the banner names it ("API", "Temporal UI", …). */
  service: string;
  preferred: number;
  actual: number;
}

export const SERVICES: Record<keyof DevPorts, string> = {
  postgres: 'Postgres',
  temporal: 'Temporal',
  temporalUi: 'Temporal UI',
  api: 'API',
  demoApp: 'Demo app',
  identityProvider: 'Sign-in provider',
  mailSmtp: 'Mail catcher (SMTP)',
  mail: 'Mail catcher',
};

/** The services whose servers live in the `gatehouse dev` process itself. */
export type OwnServers = Partial<
  Record<'api' | 'demoApp' | 'temporalUi' | 'identityProvider' | 'mailSmtp' | 'mail', Server>
>;

/**
 * The ports of the local stack: the preferred ones when free, else any free port. Every
 * replacement is reported, because anything written for the default (the README's examples, a
 * bookmark, a script) would silently reach whatever holds it. An `API_PORT` that is set is the
 * user's own choice, never replaced; services that run elsewhere (`skip`) need no port.
 *
 * A server of `servers` is bound here, on the port chosen for it, and keeps it: another program
 * starting while the rest of the stack starts cannot take it. The other ports are
 * only chosen; what binds them later must cope with losing one (see `startOnFreePort`).
 */
export async function pickDevPorts(
  state: LocalState,
  options: {
    apiPort?: number;
    /** Where the API listens (API_HOST); the other servers listen on loopback. */
    apiHost?: string;
    skip?: readonly (keyof DevPorts)[];
    servers?: OwnServers;
  } = {},
): Promise<{ ports: DevPorts; replaced: ReplacedPort[] }> {
  const preferred: DevPorts = {
    postgres: state.postgres.port,
    temporal: state.temporal.port,
    temporalUi: state.temporal.uiPort,
    api: state.api.port,
    demoApp: state.demoApp.port,
    identityProvider: state.identityProvider.port,
    mailSmtp: state.mailCatcher.smtpPort,
    mail: state.mailCatcher.webPort,
  };
  const ports = { ...preferred };
  const replaced: ReplacedPort[] = [];
  for (const name of Object.keys(preferred) as (keyof DevPorts)[]) {
    if (options.skip?.includes(name)) continue;
    const server = name === 'postgres' || name === 'temporal' ? undefined : options.servers?.[name];
    const host = name === 'api' ? (options.apiHost ?? '127.0.0.1') : '127.0.0.1';
    if (name === 'api' && options.apiPort !== undefined) {
      ports.api = server ? await bindChosenApiPort(server, options.apiPort, host) : options.apiPort;
      continue;
    }
    ports[name] = server
      ? await bindServer(server, preferred[name], host).catch((error: unknown) => {
          if (!isAddressInUse(error)) throw error;
          return bindServer(server, 0, host);
        })
      : await freePort(preferred[name]);
    if (ports[name] !== preferred[name]) {
      replaced.push({ service: SERVICES[name], preferred: preferred[name], actual: ports[name] });
    }
  }
  return { ports, replaced };
}

/** `API_PORT` is the user's choice: taken, it is an error that says so, never replaced. */
async function bindChosenApiPort(server: Server, port: number, host: string): Promise<number> {
  try {
    return await bindServer(server, port, host);
  } catch (error) {
    throw new DevStartError(
      'API',
      isAddressInUse(error)
        ? `port ${String(port)} (API_PORT) is taken by another program: stop it, or unset ` +
            'API_PORT so that gatehouse dev chooses a free port.'
        : `API_PORT=${String(port)} cannot be bound here: choose another port, or unset API_PORT ` +
            'so that gatehouse dev chooses a free one.',
      { cause: error },
    );
  }
}
