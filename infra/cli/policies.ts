import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { findEnvironmentByName } from '../../activities/db/environments.js';
import { simulatePolicy, type Simulation } from '../../activities/policy/simulation.js';
import { presentSimulation } from '../../api/policies/simulation-answer.js';
import { callWindow, simulationQuery } from '../../api/policies/simulation-inputs.js';
import { policyIdParam, replacePolicyBody } from '../../api/routes/policies.js';
import type { Sql } from '../database/client.js';
import { listOutput } from './table.js';

export interface SimulateOptions {
  env: string;
  policy?: string;
  last?: string;
  since?: string;
  until?: string;
  json?: boolean;
}

/** What `GET /v1/policies/{id}` answers besides the body PUT takes: a saved answer works too. */
const ANSWER_ONLY = ['environment', 'version', 'updated_at', 'updated_by'];

/** The API's own validation, its issues named as the file's fields or the flags. */
function checked<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const at = where === 'flags' ? `--${path || 'window'}` : `${where}${path ? ` ${path}` : ''}`;
    return `${at}: ${issue.message}`;
  });
  throw new Error(issues.join('; '));
}

/** The candidate in the file and the policy it is for: `--policy`, the file's `id`, or `default`. */
async function candidateIn(
  file: string,
  flag: string | undefined,
): Promise<{ id: string; body: unknown }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${file}: must hold a policy, as PUT /v1/policies/{id} takes it`);
  }
  const { id: named, ...rest } = parsed as Record<string, unknown>;
  if (named !== undefined && typeof named !== 'string') throw new Error(`${file} id: not a string`);
  if (flag !== undefined && named !== undefined && flag !== named) {
    throw new Error(`--policy ${flag} and the file's id ${named} differ: which policy is it?`);
  }
  const body = Object.fromEntries(
    Object.entries(rest).filter(([key]) => !ANSWER_ONLY.includes(key)),
  );
  return { id: flag ?? named ?? 'default', body };
}

const when = (time: Date | null) => time?.toISOString() ?? '…';

/** The simulation for people: what would change, in a table. */
function simulationText(simulation: Simulation): string {
  const { window } = simulation;
  const version =
    simulation.currentVersion === null
      ? 'no current version'
      : `v${String(simulation.currentVersion)}`;
  const lines = [
    `policy ${simulation.policyId} (${version}) against the candidate: ${String(simulation.calls)} calls, ${when(window.oldest)} to ${when(window.newest)}${window.more ? ` (the newest ${String(window.last)}; the window holds more)` : ''}`,
    '',
    listOutput(
      [
        ...simulation.changes.map((change) => ({
          from: change.from,
          to: change.to,
          calls: change.count,
          samples: change.samples.join(', '),
        })),
        { from: 'unchanged', to: '', calls: simulation.unchanged, samples: '' },
        {
          from: 'cannot judge',
          to: '',
          calls: simulation.cannotJudge.count,
          samples: simulation.cannotJudge.samples.map((s) => s.auditId).join(', '),
        },
      ],
      [
        ['FROM', (row) => row.from],
        ['TO', (row) => row.to],
        ['CALLS', (row) => String(row.calls)],
        ['SAMPLES (audit ids)', (row) => row.samples],
      ],
      { empty: '' },
    ),
  ];
  for (const sample of simulation.cannotJudge.samples) {
    lines.push(`  ${sample.auditId} (${sample.version}): ${sample.reason}`);
  }
  if (simulation.notSimulated) {
    lines.push(
      `${String(simulation.notSimulated.count)} calls not simulated: ${simulation.notSimulated.reason}`,
    );
  }
  return lines.join('\n');
}

/**
 * `gatehouse policies simulate <file>`: what the API's POST /v1/policies/{id}/simulate answers,
 * from the same code, checked by the same schemas. Changes nothing.
 */
export async function simulatePolicyCommand(
  sql: Sql,
  file: string,
  options: SimulateOptions,
): Promise<string> {
  const { id: named, body } = await candidateIn(file, options.policy);
  const { id } = checked(policyIdParam, { id: named }, 'policy');
  const candidate = checked(replacePolicyBody, body, file);
  const query = checked(
    simulationQuery,
    Object.fromEntries(
      Object.entries({ last: options.last, since: options.since, until: options.until }).filter(
        ([, value]) => value !== undefined,
      ),
    ),
    'flags',
  );
  const environment = await findEnvironmentByName(sql, options.env);
  if (!environment) throw new Error(`no environment "${options.env}"`);
  const outcome = await simulatePolicy(sql, environment.id, id, candidate, callWindow(query));
  if (!outcome.ok) {
    throw new Error(
      `agent "${outcome.agent}" is already governed by policy "${outcome.claimedBy}"`,
    );
  }
  if (options.json) return JSON.stringify(presentSimulation(outcome.simulation), null, 2);
  return simulationText(outcome.simulation);
}
