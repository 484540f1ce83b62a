import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Gatehouse's own Prometheus metrics (README, "Observe it"). One registry per process: each
 * process counts what happens in it (the API its decisions on held repeats and its rate-limit
 * refusals, the worker the calls it runs, the app's answers, refreshes and audit writes), and
 * Prometheus adds the processes up. Labels are bounded: apps, decisions, kinds, status codes;
 * never users, agents, ids or anything a caller chooses.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'gatehouse_' });

export const callsTotal = new Counter({
  name: 'gatehouse_calls_total',
  help: 'Governed calls answered, by decision (allowed, blocked, approved, denied, failed, expired, cancelled), app and way in (api, mcp, nexus, ...): one per audit event',
  labelNames: ['decision', 'app', 'via'] as const,
  registers: [registry],
});

export const approvalLatency = new Histogram({
  name: 'gatehouse_approval_latency_seconds',
  help: 'From an approval being requested to its decision by a person',
  buckets: [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
  registers: [registry],
});

export const upstreamRequests = new Counter({
  name: 'gatehouse_upstream_requests_total',
  help: "Requests to apps, by app and the app's HTTP status (or timeout, unreachable, error)",
  labelNames: ['app', 'status'] as const,
  registers: [registry],
});

export const upstreamDuration = new Histogram({
  name: 'gatehouse_upstream_duration_seconds',
  help: "Time to the app's answer headers, by app",
  labelNames: ['app'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const tokenRefreshes = new Counter({
  name: 'gatehouse_token_refreshes_total',
  help: 'OAuth token refreshes at the app, by app and outcome (refreshed, revoked, failed)',
  labelNames: ['app', 'outcome'] as const,
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'gatehouse_rate_limited_total',
  help: "Requests refused 429 by Gatehouse's own limits, by kind (key, failed_auth, pages)",
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const approvalNotifications = new Counter({
  name: 'gatehouse_approval_notifications_total',
  help: 'Attempts to tell approvers of a held call, by channel (email, slack, teams) and outcome (sent; retrying: failed, tried again; failed: will not be tried again; skipped: nothing to send)',
  labelNames: ['channel', 'outcome'] as const,
  registers: [registry],
});

export const mcpTaskResultsWaiting = new Gauge({
  name: 'gatehouse_mcp_task_results_waiting',
  help: 'MCP tasks/result requests this API process holds open, waiting for their task to end',
  registers: [registry],
});

export const auditWriteRetries = new Counter({
  name: 'gatehouse_audit_write_retries_total',
  help: "Audit writes tried again by Temporal after a failed attempt (the call's answer waits)",
  registers: [registry],
});
