import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A named map of records that, when the store has a data directory, is mirrored to
 * `<dataDir>/<name>.json`. Callers mutate `entries` and then await `save()`, so once a request
 * has been answered its effects are on disk and a restarted app sees them.
 */
export class Collection<T> {
  #current: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;

  constructor(
    readonly entries: Map<string, T>,
    private readonly file: string | undefined,
  ) {}

  save(): Promise<void> {
    const file = this.file;
    if (file === undefined) return Promise.resolve();
    // Writes run one after another; saves requested while one is waiting share it, because the
    // snapshot is taken only when the write starts and so already includes their changes.
    this.#queued ??= this.#current
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return writeAtomically(file, JSON.stringify(Object.fromEntries(this.entries)));
      });
    this.#current = this.#queued;
    return this.#queued;
  }

  async flush(): Promise<void> {
    await this.#current.catch(() => undefined);
  }
}

/** Collections kept in memory, or persisted as one JSON file each when `dataDir` is given. */
export class Store {
  readonly #collections = new Map<string, Collection<unknown>>();

  private constructor(
    readonly dataDir: string | undefined,
    private readonly loaded: Map<string, Record<string, unknown>>,
  ) {}

  static async open(dataDir?: string): Promise<Store> {
    const loaded = new Map<string, Record<string, unknown>>();
    if (dataDir !== undefined) {
      await mkdir(dataDir, { recursive: true });
      for (const file of await readdir(dataDir)) {
        if (!file.endsWith('.json')) continue;
        const parsed: unknown = JSON.parse(await readFile(join(dataDir, file), 'utf8'));
        if (isRecord(parsed)) loaded.set(file.slice(0, -'.json'.length), parsed);
      }
    }
    return new Store(dataDir, loaded);
  }

  /** `parse` turns a stored JSON value back into a T, or undefined to drop a corrupt entry. */
  collection<T>(name: string, parse: (raw: unknown) => T | undefined): Collection<T> {
    const existing = this.#collections.get(name);
    if (existing) return existing as Collection<T>;
    const entries = new Map<string, T>();
    for (const [id, raw] of Object.entries(this.loaded.get(name) ?? {})) {
      const value = parse(raw);
      if (value !== undefined) entries.set(id, value);
    }
    const file = this.dataDir === undefined ? undefined : join(this.dataDir, `${name}.json`);
    const created = new Collection(entries, file);
    this.#collections.set(name, created);
    return created;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.#collections.values()].map((c) => c.flush()));
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function writeAtomically(file: string, contents: string): Promise<void> {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    // Owner-only: the files hold client secrets and live tokens.
    await writeFile(temp, contents, { encoding: 'utf8', mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
