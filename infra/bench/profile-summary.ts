import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The parts of a V8 `.cpuprofile` this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; hitCount?: number }[];
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileShare {
  where: string;
  ms: number;
  share: number;
}

/** Where a function lives, at the grain that says who to blame: a package, or our own folder. */
function owner(url: string, repoRoot: string): string {
  if (url === '') return '(native, GC and idle)';
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? file);
  }
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/')[0] ?? ''}`;
  if (file.startsWith(repoRoot)) return path.relative(repoRoot, file).split('/')[0] ?? file;
  return file;
}

/**
 * Self time of one profile, summed by owner (package, node built-in, or our top-level folder),
 * largest first. `(idle)` is left out: it is time the process had nothing to do.
 */
export function summarizeProfile(profile: CpuProfile, repoRoot: string): ProfileShare[] {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  samples.forEach((id, i) => {
    const node = byNode.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return;
    const where =
      node.callFrame.functionName === '(garbage collector)'
        ? '(garbage collector)'
        : owner(node.callFrame.url, repoRoot);
    selfMs.set(where, (selfMs.get(where) ?? 0) + (deltas[i] ?? 0) / 1000);
  });
  const total = [...selfMs.values()].reduce((a, b) => a + b, 0);
  return [...selfMs.entries()]
    .map(([where, ms]) => ({
      where,
      ms: Math.round(ms),
      share: Math.round((ms / total) * 1000) / 10,
    }))
    .sort((a, b) => b.ms - a.ms);
}

/** Every profile under `dir` (one folder per process: `api-1`, `worker-1`, …), summarized. */
export async function summarizeProfiles(
  dir: string,
  repoRoot: string,
): Promise<{ file: string; shares: ProfileShare[] }[]> {
  const files = (await readdir(dir, { recursive: true })).filter((file) =>
    file.endsWith('.cpuprofile'),
  );
  return Promise.all(
    files.sort().map(async (file) => ({
      file,
      shares: summarizeProfile(
        JSON.parse(await readFile(path.join(dir, file), 'utf8')) as CpuProfile,
        repoRoot,
      ),
    })),
  );
}
