import { readdir, readFile } from 'node:fs/promises';

/** The processes a bench stack runs, as the report names them. */
export type Role = 'api' | 'worker' | 'temporal' | 'postgres';

export type CpuMs = Record<Role, number>;

/** Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every platform we run. */
const TICK_MS = 10;

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime: the process and its reaped children. */
  ticks: number;
}

export async function procStat(pid: number): Promise<ProcStat | null> {
  try {
    const text = await readFile(`/proc/${String(pid)}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields follow the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const num = (i: number) => Number(fields[i - 3]);
    return { pid, ppid: num(4), ticks: num(14) + num(15) + num(16) + num(17) };
  } catch {
    return null; // Gone between the listing and the read.
  }
}

export async function commandLine(pid: number): Promise<string> {
  try {
    return (await readFile(`/proc/${String(pid)}/cmdline`, 'utf8')).replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

export function roleOf(command: string): Role | null {
  if (/bin\.js api\b/.test(command)) return 'api';
  if (/bin\.js worker\b/.test(command)) return 'worker';
  if (/server start-dev/.test(command)) return 'temporal';
  if (/\bpostgres\b/.test(command)) return 'postgres';
  return null;
}

/**
 * CPU time so far of every process this benchmark started, by role: the bench process's
 * descendants, each counted with the descendants of its own (Postgres backends belong to the
 * postmaster). Linux only; elsewhere every role reads 0.
 */
export async function cpuByRole(root: number = process.pid): Promise<CpuMs> {
  const totals: CpuMs = { api: 0, worker: 0, temporal: 0, postgres: 0 };
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return totals;
  }
  const stats = (
    await Promise.all(entries.filter((e) => /^\d+$/.test(e)).map((e) => procStat(Number(e))))
  ).filter((s): s is ProcStat => s !== null);
  const children = new Map<number, ProcStat[]>();
  for (const stat of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const subtree = (stat: ProcStat): number =>
    stat.ticks + (children.get(stat.pid) ?? []).reduce((sum, child) => sum + subtree(child), 0);
  const visit = async (pid: number): Promise<void> => {
    for (const child of children.get(pid) ?? []) {
      const role = roleOf(await commandLine(child.pid));
      if (role) totals[role] += subtree(child) * TICK_MS;
      else await visit(child.pid);
    }
  };
  await visit(root);
  return totals;
}

/** CPU milliseconds per completed call, by role, between two readings. */
export function cpuPerCall(before: CpuMs, after: CpuMs, calls: number): CpuMs & { total: number } {
  const per = (role: Role) =>
    calls === 0 ? 0 : Math.round(((after[role] - before[role]) / calls) * 100) / 100;
  const result = {
    api: per('api'),
    worker: per('worker'),
    temporal: per('temporal'),
    postgres: per('postgres'),
  };
  return {
    ...result,
    total: Math.round((result.api + result.worker + result.temporal + result.postgres) * 100) / 100,
  };
}
