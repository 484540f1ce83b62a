import { APPROVAL_WAYS, type ApprovalWay, type ApprovalWays } from './approval-ways.js';
import { columns, ratio, type Row } from './columns.js';
import type { Measurement } from './measure.js';

export interface ApprovalWayReport {
  requests: number;
  errors: number;
  p50: number;
  p95: number;
  max: number;
  p50OverFloor: number;
  p95OverFloor: number;
}

/** The three ways next to the engine floor of the same run, as the JSON report keeps them. */
export interface ApprovalWaysReport {
  floor: { p50: number; p95: number };
  ways: Record<ApprovalWay, ApprovalWayReport>;
  /** Approvals the bench person failed to approve: 0 unless the run is broken. */
  personFailures: number;
}

export function approvalWaysReport(
  floor: Measurement,
  measured: ApprovalWays & { personFailures: number },
): ApprovalWaysReport {
  const way = (m: Measurement): ApprovalWayReport => ({
    requests: m.requests,
    errors: m.errors,
    p50: m.p50,
    p95: m.p95,
    max: m.max,
    p50OverFloor: ratio(m.p50, floor.p50),
    p95OverFloor: ratio(m.p95, floor.p95),
  });
  return {
    floor: { p50: floor.p50, p95: floor.p95 },
    ways: {
      webhookRetry: way(measured.webhookRetry),
      preferWait: way(measured.preferWait),
      nexus: way(measured.nexus),
    },
    personFailures: measured.personFailures,
  };
}

export function approvalWaysTable(report: ApprovalWaysReport): string {
  const rows: Row[] = [
    [
      'approval round trip (first request → result)',
      'rounds',
      'errors',
      'p50 ms',
      'p95 ms',
      'max ms',
      'p50 ÷ floor',
      'p95 ÷ floor',
    ],
    ['engine floor (empty workflow)', '', '', report.floor.p50, report.floor.p95, '', 1, 1],
  ];
  for (const [name, label] of Object.entries(APPROVAL_WAYS) as [ApprovalWay, string][]) {
    const w = report.ways[name];
    rows.push([label, w.requests, w.errors, w.p50, w.p95, w.max, w.p50OverFloor, w.p95OverFloor]);
  }
  const failures =
    report.personFailures > 0
      ? `\n${String(report.personFailures)} approvals the bench person could not approve`
      : '';
  return columns(rows) + failures;
}
