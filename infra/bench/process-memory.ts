import { readdir, readFile } from 'node:fs/promises';
import { commandLine, procStat, roleOf, type Role } from './process-cpu.js';

/** Resident memory in MB of the processes whose size the held-calls scenario watches. */
export type RssMb = Record<Exclude<Role, 'postgres'>, number>;

async function rssKb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${String(pid)}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0; // Gone between the listing and the read.
  }
}

/**
 * RSS of the API, worker and Temporal processes this benchmark started (with any children of
 * theirs), summed by role. Postgres is left out: its backends share one buffer pool, which a
 * sum of RSS would count once per backend. Linux only; elsewhere every role reads 0.
 */
export async function rssByRole(root: number = process.pid): Promise<RssMb> {
  const totals: RssMb = { api: 0, worker: 0, temporal: 0 };
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return totals;
  }
  const stats = await Promise.all(
    entries.filter((e) => /^\d+$/.test(e)).map((e) => procStat(Number(e))),
  );
  const children = new Map<number, number[]>();
  for (const stat of stats) {
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat.pid]);
  }
  const subtreeKb = async (pid: number): Promise<number> => {
    let kb = await rssKb(pid);
    for (const child of children.get(pid) ?? []) kb += await subtreeKb(child);
    return kb;
  };
  const visit = async (pid: number): Promise<void> => {
    for (const child of children.get(pid) ?? []) {
      const role = roleOf(await commandLine(child));
      if (role === 'postgres') continue;
      if (role) totals[role] += Math.round((await subtreeKb(child)) / 1024);
      else await visit(child);
    }
  };
  await visit(root);
  return totals;
}
