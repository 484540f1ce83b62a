import type { z } from 'zod';
import type { AuditEvent } from '../../../activities/db/audit-events.js';
import { utcTime } from '../../approvals/pages/time.js';
import { html, type Html } from '../../connect/pages/html.js';
import type { ResolvedBranding } from '../../connect/pages/theme.js';
import type { simulationAnswer } from '../../policies/simulation-answer.js';
import { renderConsolePage, type Viewer } from '../pages/layout.js';
import { lineDiff, renderDiffSide } from '../pages/line-diff.js';
import { renderCandidateForm } from './edit-page.js';

type SimulationView = z.infer<typeof simulationAnswer>;

export interface SimulationPage {
  branding: ResolvedBranding;
  viewer: Viewer;
  policy: { id: string; name: string; version: number };
  simulation: SimulationView;
  /** The recorded calls the simulation names as samples, by audit id (those still readable). */
  calls: ReadonlyMap<string, AuditEvent>;
  /** The candidate as the person wrote it (line breaks normalised). */
  text: string;
  /** The current version and the candidate, each as pretty JSON, for "what you changed". */
  currentJson: string;
  candidateJson: string;
  /** The seal of the save form (simulated-digest.ts). */
  digest: string;
}

/**
 * What the candidate would change, read before anything is saved: how many recorded calls each
 * version decides how, the calls that would be decided differently (with examples), those a
 * condition cannot judge, and the edit itself. Then "Save this version", carrying exactly the
 * candidate simulated and its seal, and the form to change it and simulate again.
 */
export function renderSimulationPage(page: SimulationPage): string {
  const { simulation, viewer, policy } = page;
  const changed = simulation.changes.reduce((sum, change) => sum + change.count, 0);
  const diff = lineDiff(page.currentJson, page.candidateJson);
  const current = `Version ${String(policy.version)}`;
  return renderConsolePage({
    branding: page.branding,
    title: `Simulation of ${policy.name}`,
    section: 'policies',
    viewer,
    body: html`
      <p class="muted">
        <a href="${viewer.base}/policies">Policies</a> ·
        <a href="${viewer.base}/policies/${policy.id}">${policy.name}</a>
      </p>
      <h1>What your version of ${policy.name} would change</h1>
      <p class="lead">
        ${String(simulation.calls)} recorded calls replayed: judged now by ${current.toLowerCase()}
        and by your candidate.
        ${
          changed === 0
            ? html`<strong>None would be decided differently.</strong>`
            : html`<strong>${String(changed)} would be decided differently.</strong>`
        }
      </p>
      <div class="panel">
        <dl class="facts">
          <dt>Calls replayed</dt>
          <dd>${String(simulation.calls)}${windowInWords(simulation)}</dd>
          <dt>Decided differently</dt>
          <dd>${String(changed)}</dd>
          <dt>Decided alike</dt>
          <dd>${String(simulation.unchanged)}</dd>
          <dt>Cannot be judged</dt>
          <dd>${String(simulation.cannot_judge.count)}</dd>
          ${
            simulation.not_simulated &&
            html`<dt>Not simulated</dt>
              <dd>
                ${String(simulation.not_simulated.count)}: ${simulation.not_simulated.reason}
              </dd>`
          }
        </dl>
      </div>
      <h2>Decisions</h2>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Decision</th>
            <th scope="col">${current}</th>
            <th scope="col">Your version</th>
          </tr>
        </thead>
        <tbody>
          ${(['allow', 'ask', 'deny'] as const).map(
            (decision) =>
              html`<tr>
                <td data-label="Decision">${decision}</td>
                <td data-label="${current}">${String(simulation.decisions.current[decision])}</td>
                <td data-label="Your version">
                  ${String(simulation.decisions.candidate[decision])}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      <h2 id="changes">Calls that would be decided differently</h2>
      ${
        simulation.changes.length === 0
          ? html`<p class="none">None of the calls replayed.</p>`
          : simulation.changes.map(
              (change) =>
                html`<section class="part" aria-label="${change.from} to ${change.to}">
                  <h3>
                    ${change.from} → ${change.to}: ${String(change.count)}
                    call${change.count === 1 ? '' : 's'}
                  </h3>
                  ${renderCalls(change.samples, page.calls, change.count)}
                </section>`,
            )
      }
      ${
        simulation.cannot_judge.count > 0 &&
        html`<h2>Calls a condition cannot judge</h2>
          <p class="muted">
            Counted neither as changed nor as alike: a condition reads what the audit trail does not
            keep (such as proxy headers), or failed on the recorded call.
          </p>
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Call</th>
                <th scope="col">${current}</th>
                <th scope="col">Your version</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              ${simulation.cannot_judge.samples.map(
                (sample) =>
                  html`<tr>
                    <td data-label="Call">${callInWords(sample.audit_id, page.calls)}</td>
                    <td data-label="${current}">${sample.current}</td>
                    <td data-label="Your version">${sample.candidate}</td>
                    <td data-label="Why">${sample.reason}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
      }
      <h2>What you changed</h2>
      <div class="sbs">
        <div>
          <p class="side">${current}</p>
          ${renderDiffSide(diff.before, current)}
        </div>
        <div>
          <p class="side">Your version</p>
          ${renderDiffSide(diff.after, 'Your version')}
        </div>
      </div>
      <form method="post" action="${viewer.base}/policies/${policy.id}/save" class="panel part">
        <input type="hidden" name="csrf" value="${viewer.formToken}" />
        <input type="hidden" name="candidate" value="${page.text}" />
        <input type="hidden" name="based_on" value="${String(policy.version)}" />
        <input type="hidden" name="digest" value="${page.digest}" />
        <p>
          Saving writes your version as version ${String(policy.version + 1)}: it governs every call
          from then on, held calls included when they run. It is saved only while version
          ${String(policy.version)} is still the current one.
        </p>
        <button type="submit">Save this version</button>
      </form>
      <h2>Change it again</h2>
      <div class="panel">
        ${renderCandidateForm({
          viewer,
          policyId: policy.id,
          text: page.text,
          button: 'Simulate again',
        })}
      </div>
    `,
  });
}

function windowInWords(simulation: SimulationView): string {
  const { window } = simulation;
  const parts: string[] = [];
  if (window.oldest && window.newest) {
    parts.push(
      `recorded from ${window.oldest.slice(0, 19).replace('T', ' ')} to ${window.newest.slice(0, 19).replace('T', ' ')} UTC`,
    );
  }
  if (window.more) parts.push(`the newest ${String(window.last)} of more`);
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

/** A recorded call in one line: when, which agent, what action, for which user. */
function callInWords(id: string, calls: ReadonlyMap<string, AuditEvent>): Html {
  const call = calls.get(id);
  if (!call) return html`<code>${id}</code>`;
  return html`<code>${call.action}</code> by
    ${call.agentId}${call.userExternalId === null ? '' : html` for ${call.userExternalId}`},
    ${utcTime(call.time.toISOString())} <span class="muted">(audit <code>${id}</code>)</span>`;
}

function renderCalls(
  samples: readonly string[],
  calls: ReadonlyMap<string, AuditEvent>,
  count: number,
): Html {
  return html`<ul>
      ${samples.map((id) => html`<li>${callInWords(id, calls)}</li>`)}
    </ul>
    ${
      count > samples.length &&
      html`<p class="muted">
        The newest ${String(samples.length)} shown; ${String(count - samples.length)} more.
      </p>`
    }`;
}
