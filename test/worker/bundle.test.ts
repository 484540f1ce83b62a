import {
  copyFile,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { bundleWorkflows, workflowsPath } from '../../worker/bundle.js';
import { testEnv } from '../support/stack-env.js';

describe('the workflow bundle', () => {
  it('leaves the OpenTelemetry workflow interceptors out when tracing is off', async () => {
    // The tests' shared bundle is the one a worker without tracing builds (bundleWorkflows()).
    // In the sandbox those interceptors make spans on every workflow task whether or not anything
    // exports them, which doubled the worker's CPU per call.
    const code = await readFile(testEnv('workflowBundle'), 'utf8');
    expect(code).toContain('gatehouse'); // a real bundle of our workflows
    expect(code).not.toContain('@temporalio/interceptors-opentelemetry/lib/workflow');
  });
});

describe('the workflow bundle cache (WORKFLOW_BUNDLE_CACHE)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  let sourceCache: Promise<string> | undefined;
  /** A cache this file bundled into once (without tracing). */
  function ownCache(): Promise<string> {
    sourceCache ??= (async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bundle-source-'));
      dirs.push(dir);
      await bundleWorkflows({ tracing: false, cacheDir: dir });
      return dir;
    })();
    return sourceCache;
  }

  /**
   * A copy of a cache this file bundled into whose entry's code is a
   * marker: what comes back says whether the entry was used or the sources bundled again.
   */
  async function markedCache(
    edit: (inputs: Record<string, string>) => void = () => undefined,
  ): Promise<{ dir: string; entry: string; marker: string }> {
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bundle-cache-'));
    dirs.push(dir);
    // A cache of this file's own, not the run's: the processes other test files start write
    // and replace entries there while these tests read it.
    const cacheDir = await ownCache();
    const [name] = (await readdir(cacheDir)).filter((file) => file.endsWith('.json'));
    if (!name) throw new Error('bundling left no cached bundle');
    const entry = path.join(dir, name);
    await copyFile(path.join(cacheDir, name), entry);
    const cached = JSON.parse(await readFile(entry, 'utf8')) as {
      inputs: Record<string, string>;
      code: string;
    };
    const marker = `// the cached bundle ${path.basename(dir)}`;
    edit(cached.inputs);
    await writeFile(entry, JSON.stringify({ ...cached, code: marker }));
    return { dir, entry, marker };
  }

  it('is used while every file the bundle read is as it was', async () => {
    const { dir, marker } = await markedCache();
    expect((await bundleWorkflows({ tracing: false, cacheDir: dir })).code).toBe(marker);
  }, 120_000);

  it('is bundled anew, and replaced, once a file the bundle read has changed', async () => {
    const { dir, entry, marker } = await markedCache((inputs) => {
      // As if workflows/index.ts had other content when the entry was made.
      inputs[workflowsPath] = 'another content';
    });
    const { code } = await bundleWorkflows({ tracing: false, cacheDir: dir });
    expect(code).not.toBe(marker);
    expect(code).toContain('gatehouse');
    const replaced = JSON.parse(await readFile(entry, 'utf8')) as {
      inputs: Record<string, string>;
      code: string;
    };
    expect(replaced.code).toBe(code);
    expect(replaced.inputs[workflowsPath]).toMatch(/^[0-9a-f]{64}$/);
  }, 120_000);

  it('is kept when a folder among its inputs changed while it was bundled', async () => {
    // A folder's modification time moves whenever anything is made in it: a checkout under /tmp
    // had /tmp among the inputs, so no entry was ever kept. Here the workflows' folder is dated
    // after the bundling starts, as if a file had been made in it meanwhile.
    const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-bundle-cache-'));
    dirs.push(dir);
    const folder = path.dirname(workflowsPath);
    const was = await stat(folder);
    const later = new Date(Date.now() + 3_600_000);
    await utimes(folder, later, later);
    try {
      const { code } = await bundleWorkflows({ tracing: false, cacheDir: dir });
      const [name] = await readdir(dir);
      if (!name) throw new Error('no entry was kept');
      const kept = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as {
        inputs: Record<string, string>;
        code: string;
      };
      expect(kept.code).toBe(code);
      expect(kept.inputs[folder]).toBe('dir');
    } finally {
      await utimes(folder, was.atime, was.mtime);
    }
  }, 120_000);
});
