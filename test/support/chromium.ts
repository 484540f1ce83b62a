import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Debian's Chromium for the browser tests. CI starts on a fresh machine, so the test set-up
 * installs the package when it is missing (the machines reach Debian's package mirror).
 */
export async function ensureChromium(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  if (await executable(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'Chromium is missing: install the Debian package `chromium` (or set CHROMIUM_PATH).',
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env, maxBuffer: 64 * 1024 * 1024 });
  await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], {
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!(await executable(CHROMIUM)))
    throw new Error('apt-get installed chromium, but /usr/bin/chromium is missing');
  return CHROMIUM;
}

/** Flags for headless Chromium on these machines: no sandbox as root, no calls home. */
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
