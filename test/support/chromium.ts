import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** What a person runs once, when the tests may not install it themselves. */
export const CHROMIUM_INSTALL_COMMAND =
  'sudo apt-get update && sudo apt-get install --no-install-recommends chromium';

/** Two test files may ask at once (jest runs two workers); dpkg allows one install at a time. */
const INSTALL_LOCK = path.join(tmpdir(), 'gatehouse-chromium-install.lock');

/**
 * Debian's Chromium for the browser tests. It is the only Chromium these machines can get (the
 * browser builds Playwright downloads are not reachable), and CI starts on a fresh machine as
 * root, so there the tests install the package themselves, saying so; anyone else is told the
 * one command to run (README, "Test it").
 */
export async function ensureChromium(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  if (await executable(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is missing for the browser tests: run \`${CHROMIUM_INSTALL_COMMAND}\` once ` +
        '(Debian), or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
  }
  console.warn(
    `Chromium is missing: running as root, the browser tests install Debian's package now ` +
      `(apt-get update, then apt-get install --no-install-recommends chromium; about a minute, ` +
      `once). Set CHROMIUM_PATH to use another binary instead (README, "Test it").`,
  );
  const install =
    `[ -x ${CHROMIUM} ] || { apt-get update -qq && ` +
    'apt-get install -y -qq --no-install-recommends chromium; }';
  try {
    await run('flock', [INSTALL_LOCK, 'sh', '-c', install], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    throw new Error(
      `Installing Chromium failed (${(error as Error).message.trim()}): run ` +
        `\`${CHROMIUM_INSTALL_COMMAND}\` by hand, or set CHROMIUM_PATH.`,
      { cause: error },
    );
  }
  if (!(await executable(CHROMIUM)))
    throw new Error(`apt-get installed chromium, but ${CHROMIUM} is missing`);
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
