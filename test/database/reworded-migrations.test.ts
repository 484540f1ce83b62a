// Migrations whose comments were reworded after they shipped (infra/database/reworded-migrations.ts).
// Each recorded earlier text, read from git, differs from today's only in `--` comments, and every
// such text git holds is recorded, so the rewrite can never let a changed statement through. On a
// real Postgres: a database migrated with the earlier texts starts and is given today's checksums;
// an unknown checksum, or one recorded for another migration, is refused as postgrator always did.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import postgres from 'postgres';
import Postgrator from 'postgrator';
import { migrate } from '../../infra/database/migrate.js';
import {
  acceptRewordedMigrations,
  REWORDED_MIGRATIONS,
} from '../../infra/database/reworded-migrations.js';
import { withoutLineComments } from '../support/sql-without-comments.js';
import { testEnv } from '../support/stack-env.js';
import { stopsAfterAll } from '../support/stops.js';
import { withDatabase } from '../support/template-database.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MIGRATIONS = 'infra/migrations';

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

async function git(...args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', args, {
      cwd: REPO,
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    // A shallow clone or an exported tree lacks the texts these checks compare.
    throw new Error(`git ${args.join(' ')} failed: these checks need the repository's history`, {
      cause: error,
    });
  }
}

const textAt = (commit: string, file: string) => git('show', `${commit}:${MIGRATIONS}/${file}`);

/** Today's migration files by version. */
async function migrationFiles(): Promise<Map<number, { file: string; text: string }>> {
  const files = (await readdir(path.join(REPO, MIGRATIONS))).filter((f) => f.endsWith('.sql'));
  return new Map(
    await Promise.all(
      files.map(
        async (file) =>
          [
            Number(file.split('.')[0]),
            { file, text: await readFile(path.join(REPO, MIGRATIONS, file), 'utf8') },
          ] as const,
      ),
    ),
  );
}

describe('the comparison the recorded texts are held to', () => {
  it('sets aside `--` comments and how they break lines', () => {
    expect(
      withoutLineComments(
        '-- Why.\n-- More.\ncreate table t (\n  -- A column.\n  x int -- Why x.\n);\n',
      ),
    ).toBe(withoutLineComments('-- Reworded why.\ncreate table t (\n  x int\n);'));
  });

  it('sees any change to a statement', () => {
    expect(withoutLineComments('create table t (x int); -- why')).not.toBe(
      withoutLineComments('create table t (x bigint); -- why'),
    );
  });

  it('keeps `--` inside strings, quoted names and function bodies, which Postgres keeps', () => {
    for (const text of [
      "select 'a -- b';",
      "select E'it\\'s -- b';",
      'select 1 as "a -- b";',
      'create function f() returns int language plpgsql as $body$ begin -- why\n return 1; end $body$;',
    ]) {
      expect(withoutLineComments(text)).toBe(text);
    }
    expect(withoutLineComments('as $$ begin -- why\n return 1; end $$;')).not.toBe(
      withoutLineComments('as $$ begin -- another why\n return 1; end $$;'),
    );
  });

  it('tells a line break from a space where Postgres does (two strings make one across a line)', () => {
    expect(withoutLineComments("select 'a'\n'b';")).not.toBe(
      withoutLineComments("select 'a' 'b';"),
    );
    expect(withoutLineComments("select 'a' -- why\n'b';")).toBe(
      withoutLineComments("select 'a'\n'b';"),
    );
  });
});

describe('the recorded earlier texts', () => {
  it('each differ from today’s text only in comments, and today’s text is the one recorded', async () => {
    const files = await migrationFiles();
    const problems: string[] = [];
    for (const [version, nowMd5, earlierMd5, commit] of REWORDED_MIGRATIONS) {
      const now = files.get(version);
      if (!now) {
        problems.push(`${String(version)}: no such migration`);
        continue;
      }
      if (md5(now.text) !== nowMd5) problems.push(`${now.file}: its checksum is not ${nowMd5}`);
      const earlier = await textAt(commit, now.file);
      if (md5(earlier) !== earlierMd5) problems.push(`${now.file} at ${commit}: not ${earlierMd5}`);
      if (withoutLineComments(earlier) !== withoutLineComments(now.text)) {
        problems.push(`${now.file} at ${commit}: a statement differs from today's`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('are every text a migration had in git that differs from today’s only in comments', async () => {
    const files = await migrationFiles();
    const expected: { key: string; row: string }[] = [];
    for (const [version, { file, text }] of [...files].sort(([a], [b]) => a - b)) {
      const commits = (await git('log', '--format=%H', '--', `${MIGRATIONS}/${file}`)).split('\n');
      const seen = new Set([md5(text)]);
      for (const commit of commits.filter(Boolean)) {
        const earlier = await textAt(commit, file);
        if (seen.has(md5(earlier))) continue;
        seen.add(md5(earlier));
        if (withoutLineComments(earlier) !== withoutLineComments(text)) continue;
        expected.push({
          key: `${String(version)} ${md5(text)} ${md5(earlier)}`,
          row: `[${String(version)}, '${md5(text)}', '${md5(earlier)}', '${commit.slice(0, 12)}'],`,
        });
      }
    }
    const recorded = REWORDED_MIGRATIONS.map(
      ([v, now, earlier]) => `${String(v)} ${now} ${earlier}`,
    );
    if (JSON.stringify(recorded) !== JSON.stringify(expected.map((e) => e.key))) {
      throw new Error(
        `REWORDED_MIGRATIONS must hold exactly these rows:\n${expected.map((e) => e.row).join('\n')}`,
      );
    }
  });
});

// Each case goes on from the database the one before left.
describe('migrating a database that holds earlier checksums', () => {
  const started = stopsAfterAll();
  let url: string;
  let sql: postgres.Sql;

  beforeAll(async () => {
    const adminUrl = testEnv('adminDatabaseUrl');
    const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
    const asAdmin = async (statement: string) => {
      const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
      try {
        await admin.unsafe(statement);
      } finally {
        await admin.end({ timeout: 5 });
      }
    };
    // Empty, not a copy of the run's template: these tests migrate it themselves.
    await asAdmin(`create database ${name}`);
    started.push(() => asAdmin(`drop database if exists ${name} with (force)`));
    url = withDatabase(adminUrl, name);
    sql = postgres(url, { max: 1, onnotice: () => undefined });
    started.push(() => sql.end({ timeout: 5 }));
  });

  const stored = async () =>
    new Map(
      (
        await sql<{ version: string; md5: string }[]>`
          select version::text, md5 from schema_migrations where version > 0`
      ).map((row) => [Number(row.version), row.md5]),
    );

  it('starts, and is given today’s checksums', async () => {
    const files = await migrationFiles();
    const earlier = new Map(
      REWORDED_MIGRATIONS.map(([v, , md5sum, commit]) => [v, { md5sum, commit }]),
    );
    // The migrations as a deployment ran them before the rewording, up to 20: the rest come new.
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-earlier-migrations-'));
    try {
      for (const [version, { file, text }] of files) {
        const before = earlier.get(version);
        await writeFile(path.join(dir, file), before ? await textAt(before.commit, file) : text);
      }
      const connection = postgres(url, { max: 1, onnotice: () => undefined });
      try {
        await new Postgrator({
          migrationPattern: `${dir}/*.sql`,
          driver: 'pg',
          schemaTable: 'schema_migrations',
          execQuery: async (query: string) => ({ rows: await connection.unsafe(query).simple() }),
        }).migrate('20');
      } finally {
        await connection.end({ timeout: 5 });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const before = await stored();
    expect(before.get(1)).toBe(earlier.get(1)?.md5sum);
    expect(before.get(20)).toBe(earlier.get(20)?.md5sum);

    const result = await migrate(url);

    const after20 = [...files].filter(([version]) => version > 20).map(([, { file }]) => file);
    expect(result.applied).toEqual(after20.sort());
    expect(result.version).toBe(Math.max(...files.keys()));
    expect(await stored()).toEqual(new Map([...files].map(([v, { text }]) => [v, md5(text)])));
    // And the next start finds nothing to do.
    expect(await migrate(url)).toEqual({ applied: [], version: result.version });
  });

  it('refuses an unknown checksum, and one recorded for another migration, as before', async () => {
    const files = await migrationFiles();
    const todays = (version: number) => md5(files.get(version)?.text ?? '');
    const unknown = md5('a text migration 003 never had');
    await sql`update schema_migrations set md5 = ${unknown} where version = 3`;
    await expect(migrate(url)).rejects.toThrow('MD5 checksum failed for migration [3]');
    expect((await stored()).get(3)).toBe(unknown);

    await sql`update schema_migrations set md5 = ${todays(3)} where version = 3`;
    const recordedFor3 = REWORDED_MIGRATIONS.find(([v]) => v === 3)?.[2] ?? '';
    await sql`update schema_migrations set md5 = ${recordedFor3} where version = 4`;
    await expect(migrate(url)).rejects.toThrow('MD5 checksum failed for migration [4]');
    expect((await stored()).get(4)).toBe(recordedFor3);
    await sql`update schema_migrations set md5 = ${todays(4)} where version = 4`;
  });

  it('rewrites nothing for a file whose text is not the one its rows were checked against', async () => {
    const [version, , earlierMd5] = REWORDED_MIGRATIONS[0] ?? [0, '', ''];
    await sql`update schema_migrations set md5 = ${earlierMd5} where version = ${version}`;
    const edited = [{ version, md5: md5('the file, edited again since') }];
    expect(await acceptRewordedMigrations(sql, 'schema_migrations', edited)).toEqual([]);
    expect((await stored()).get(version)).toBe(earlierMd5);
    await migrate(url);
    expect((await stored()).get(version)).toBe(
      md5((await migrationFiles()).get(version)?.text ?? ''),
    );
  });
});
