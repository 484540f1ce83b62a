/**
 * Workflows started by earlier versions must go on on this one: each history recorded from an
 * earlier version (test/fixtures/histories, recorded as its README says) is replayed against
 * today's workflow code, through the real payload codec, and must meet no nondeterminism.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { temporal } from '@temporalio/proto';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Worker, type InjectedSinks } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import type { Keyring } from '../../infra/encryption.js';
import {
  encryptedDataConverter,
  isEncrypted,
  openPayload,
  PayloadDecryptionError,
} from '../../infra/temporal/payload-codec.js';
import { FIXTURE_KEY_ID, fixtureKeyring } from '../fixtures/histories/fixture-key.js';
import { historyFromJson, type History } from '../fixtures/histories/history-json.js';
import { testEnv } from '../support/stack-env.js';
import { installTestRuntime } from '../support/test-log.js';
import { bundleWorkflows } from '../../worker/bundle.js';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const dir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const fixtures = readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort();

/** The history as JSON, for tests that change it before it is read. */
function historyJson(name: string): { events: Record<string, unknown>[] } {
  return JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as {
    events: Record<string, unknown>[];
  };
}

function eventsOf(name: string): HistoryEvent[] {
  return historyFromJson(readFileSync(path.join(dir, name), 'utf8')).events ?? [];
}

/**
 * As the worker replays: today's bundle, payloads opened by key. Without tracing, the global
 * set-up's bundle; with it, the OpenTelemetry workflow interceptors bundled in too (a worker
 * bundles them only when tracing is on, so an operator who turns tracing on or off meets
 * histories made by the other bundle).
 */
function replay(
  history: History,
  bundle: 'tracing off' | 'tracing on' = 'tracing off',
): Promise<void> {
  installTestRuntime();
  const sinks: InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> = {
    exporter: { export: { fn: () => undefined } },
  };
  return Worker.runReplayHistory(
    {
      workflowBundle:
        bundle === 'tracing off'
          ? { codePath: testEnv('workflowBundle') }
          : { code: tracingBundle },
      dataConverter: encryptedDataConverter(fixtureKeyring),
      sinks,
    },
    history,
  );
}

let tracingBundle = '';
beforeAll(async () => {
  tracingBundle = (await bundleWorkflows({ tracing: true })).code;
}, 120_000);

const markers = (events: HistoryEvent[], name: string) =>
  events.filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED &&
      event.markerRecordedEventAttributes?.markerName === name,
  );

/** The ids of the patches the history records (core writes them as clear JSON payloads). */
function patchIds(events: HistoryEvent[]): string[] {
  return markers(events, 'core_patch').map((event) => {
    const data = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { id: string }).id;
  });
}

const childrenStarted = (events: HistoryEvent[]) =>
  events
    .filter(
      (event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
    )
    .map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? '');

const closed = (events: HistoryEvent[]) =>
  events.at(-1)?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED;

describe('histories recorded from earlier versions', () => {
  it('are there to replay', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(6);
  });

  it.each(
    fixtures.flatMap((name) =>
      (['tracing off', 'tracing on'] as const).map((bundle): [string, typeof bundle] => [
        name,
        bundle,
      ]),
    ),
  )('%s replays on today’s workflow code, %s', async (name, bundle) => {
    const history = historyFromJson(readFileSync(path.join(dir, name), 'utf8'));
    await expect(replay(history, bundle)).resolves.toBe(undefined);
  });
});

/** The activity types of a history's local activities, in the order they completed. */
function localActivities(events: HistoryEvent[]): string[] {
  return markers(events, 'core_local_activity').map((event) => {
    const data = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    return (JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { activity_type: string })
      .activity_type;
  });
}

describe('the recordings of 5840116 (before approvals could need several decisions)', () => {
  const decided = [
    '5840116-approved-write-ran.json',
    '5840116-approved-write-awaiting-retry.json',
    '5840116-rejected-write-denied.json',
    '5840116-approved-write-with-grant-ran.json',
  ];

  it('settled each approval with its one decision, as the approval-quorum patch keeps them', () => {
    for (const name of decided) {
      const events = eventsOf(name);
      expect(patchIds(events)).not.toContain('approval-quorum');
      expect(localActivities(events)).toContain('settleApproval');
      expect(localActivities(events)).not.toContain('recordDecision');
    }
    expect(patchIds(eventsOf('5840116-approved-write-with-grant-ran.json'))).toContain(
      'approval-grants',
    );
    expect(closed(eventsOf('5840116-approved-write-with-grant-ran.json'))).toBe(true);
    expect(closed(eventsOf('5840116-held-write-pending.json'))).toBe(false);
  });
});

describe('the recordings of f7edb2e (before the one-step read and the decided webhook activity)', () => {
  it('hold the old command shapes the patches guard', () => {
    for (const name of ['f7edb2e-allowed-read.json', 'f7edb2e-allowed-proxy-read.json']) {
      const events = eventsOf(name);
      // Prepare, read, audit: three local activities, started without a first ticket.
      expect(markers(events, 'core_local_activity')).toHaveLength(3);
      expect(
        events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [],
      ).toHaveLength(1);
      expect(patchIds(events)).not.toContain('allowed-read-in-one-step');
      expect(closed(events)).toBe(true);
    }

    const ran = eventsOf('f7edb2e-approved-write-ran.json');
    expect(closed(ran)).toBe(true);
    expect(childrenStarted(ran)).toEqual([
      expect.stringMatching(/^webhook\/approval\.requested\//),
      expect.stringMatching(/^webhook\/approval\.decided\//),
    ]);
    expect(patchIds(ran)).not.toContain('decided-webhook-from-activity');
    expect(childrenStarted(eventsOf('f7edb2e-rejected-write-denied.json'))).toContainEqual(
      expect.stringMatching(/^webhook\/approval\.decided\//),
    );
    expect(childrenStarted(eventsOf('f7edb2e-approved-write-awaiting-retry.json'))).toContainEqual(
      expect.stringMatching(/^webhook\/approval\.decided\//),
    );

    // Recorded while they waited: a replay must carry them on, not just re-read their end.
    for (const name of [
      'f7edb2e-held-write-pending.json',
      'f7edb2e-approved-write-awaiting-retry.json',
      'f7edb2e-rejected-write-denied.json',
    ]) {
      expect(closed(eventsOf(name))).toBe(false);
    }
  });

  it('a replay meets a command the history does not hold as nondeterminism', async () => {
    // The decided webhook's child as if another one had been started: today's code, which
    // takes the old path for this history, must be found to disagree with it.
    const json = historyJson('f7edb2e-approved-write-ran.json');
    for (const event of json.events) {
      const started = event.startChildWorkflowExecutionInitiatedEventAttributes as
        { workflowId: string } | undefined;
      if (started?.workflowId.startsWith('webhook/approval.decided/')) {
        started.workflowId = 'webhook/approval.decided/another';
      }
    }
    const replayed = replay(historyFromJson(JSON.stringify(json)));
    await expect(replayed).rejects.toBeInstanceOf(DeterminismViolationError);
    await expect(replayed).rejects.toThrow(/nondeterminism/);
  });

  it('are sealed under the fixture key, which the replays need', () => {
    const [input] =
      eventsOf('f7edb2e-allowed-read.json')[0]?.workflowExecutionStartedEventAttributes?.input
        ?.payloads ?? [];
    if (!input) throw new Error('the recorded call has no input');
    expect(isEncrypted(input)).toBe(true);
    expect(openPayload(fixtureKeyring, input).data?.length).toBeGreaterThan(0);
    const otherKey: Keyring = { current: { id: FIXTURE_KEY_ID, key: Buffer.alloc(32, 1) } };
    expect(() => openPayload(otherKey, input)).toThrow(PayloadDecryptionError);
  });
});
