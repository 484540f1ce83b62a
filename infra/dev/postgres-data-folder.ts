import { createHash } from 'node:crypto';
import { access, chown, lstat, mkdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { AS_ROOT_REMEDY, assertRootOwned, canReach, type ServiceUser } from './postgres-user.js';
import { DevStartError } from './start-failure.js';

/**
 * Where root keeps a cluster for the `postgres` user when the data folder asked for lies where
 * that user cannot go (.data in a clone in /root). Kept data, not a cache: not under /tmp.
 */
export const SHARED_CLUSTERS_ROOT = '/var/lib/gatehouse';

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

async function ownedBy(folder: string, user: ServiceUser | null): Promise<void> {
  if (user) await chown(folder, user.uid, user.gid);
}

/**
 * The folder the cluster of `directory` lives in, made and given to the user Postgres runs as.
 * That is `directory` itself wherever that user can reach it. Where it cannot (root running a
 * checkout in its home, mode 0700), the cluster lives under SHARED_CLUSTERS_ROOT and `directory`
 * is a symbolic link to it, so the data is still seen where it is expected, and deleting
 * `directory` (or the whole data folder) still starts the next run from an empty cluster.
 */
export async function clusterFolder(user: ServiceUser | null, directory: string): Promise<string> {
  const parent = path.dirname(directory);
  await mkdir(parent, { recursive: true });
  if (!user || (await canReach(user, parent))) {
    if (!(await exists(directory))) {
      await mkdir(directory, { mode: 0o700 });
      await ownedBy(directory, user);
    }
    return directory;
  }

  // One place per data folder: the same one at every start, found again from its link.
  const key = createHash('sha256')
    .update(path.join(await realpath(parent), path.basename(directory)))
    .digest('hex')
    .slice(0, 16);
  const standIn = path.join(SHARED_CLUSTERS_ROOT, `postgres-${key}`);
  const found = await lstat(directory).catch(() => null);
  if (found?.isSymbolicLink() && (await readlink(directory)) === standIn) {
    if (await exists(standIn)) return standIn;
  }
  if (found?.isDirectory()) {
    if (await exists(path.join(directory, 'PG_VERSION'))) {
      throw new DevStartError(
        'embedded Postgres',
        `Move ${directory} to a folder every user can enter, or delete it to start from an empty database. ${AS_ROOT_REMEDY}`,
        {
          cause: new Error(
            `Postgres refuses to run as root, so it runs as the "${user.name}" user, which cannot reach the cluster in ${directory}`,
          ),
        },
      );
    }
  }
  try {
    // Left by an earlier start whose data folder was deleted since: its password is gone too.
    await rm(standIn, { recursive: true, force: true });
    if (found) await rm(directory, { recursive: true, force: true });
    await mkdir(SHARED_CLUSTERS_ROOT, { recursive: true, mode: 0o755 });
    await assertRootOwned(SHARED_CLUSTERS_ROOT);
    await mkdir(standIn, { mode: 0o700 });
    await ownedBy(standIn, user);
    await symlink(standIn, directory);
  } catch (error) {
    if (error instanceof DevStartError) throw error;
    throw new DevStartError('embedded Postgres', AS_ROOT_REMEDY, {
      cause: new Error(
        `Postgres refuses to run as root, so it runs as the "${user.name}" user, which cannot reach ${parent}; making its cluster in ${standIn} failed: ${(error as Error).message}`,
        { cause: error },
      ),
    });
  }
  return standIn;
}
