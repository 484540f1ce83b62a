import { execFile } from 'node:child_process';
import { lstat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import { DevStartError } from './start-failure.js';

const run = promisify(execFile);

/** The system user a server runs as when Gatehouse runs as root. */
export interface ServiceUser {
  name: string;
  uid: number;
  gid: number;
}

const NAME = 'postgres';

/** What to do when the `postgres` user cannot be given what it needs. */
export const AS_ROOT_REMEDY =
  'Run gatehouse dev as a user other than root, or set DATABASE_URL to a Postgres of your own.';

async function ids(name: string): Promise<ServiceUser> {
  const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
  return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Postgres refuses to run as root. As root, it runs as the `postgres` system user, made when
 * missing; as anyone else, as that user itself (null).
 */
export async function postgresServiceUser(): Promise<ServiceUser | null> {
  if (userInfo().uid !== 0) return null;
  try {
    return await ids(NAME);
  } catch {
    // Not there yet: made as a system user without a home or a login.
  }
  try {
    await run('groupadd', ['--force', '--system', NAME]);
    await run('useradd', ['--system', '--gid', NAME, '--no-create-home', NAME]);
    return await ids(NAME);
  } catch (error) {
    throw new DevStartError('embedded Postgres', `Make a "${NAME}" user, or: ${AS_ROOT_REMEDY}`, {
      cause: new Error(
        `Postgres refuses to run as root, and the "${NAME}" user it would run as could not be made: ${(error as Error).message}`,
        { cause: error },
      ),
    });
  }
}

/**
 * Whether `user` can enter a folder or run a file (`test -x`, run as that user): every folder
 * above it must let the user through, which a home folder of mode 0700 does not.
 */
export async function canReach(user: ServiceUser, target: string): Promise<boolean> {
  return run('test', ['-x', target], { uid: user.uid, gid: user.gid }).then(
    () => true,
    () => false,
  );
}

/**
 * Folders outside the checkout that root keeps for the `postgres` user must be root's and
 * writable by no one else: the server's binaries are run from them.
 */
export async function assertRootOwned(folder: string): Promise<void> {
  const info = await lstat(folder);
  if (!info.isDirectory() || info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new DevStartError('embedded Postgres', `Remove ${folder} (it is made again).`, {
      cause: new Error(
        `${folder}, where the postgres user's copy is kept, must be a folder of root's that no one else can write to`,
      ),
    });
  }
}
