/**
 * What the proxy (`/v1/proxy/{app}/{path}`) is when its app is an OpenAPI app: the request is
 * matched against the operations the document describes, so that an endpoint the operator graded
 * or pinned as an operation is no less governed through the proxy than as an action. Pure: the
 * reading is in proxy-operations.ts.
 *
 * Matching errs towards matching: a `{param}` matches any one non-empty segment, and literal
 * segments are compared after percent-decoding and case-insensitively, since some servers route
 * `/PETS/%31` as `/pets/1`. A request that matches an operation it is not is judged stricter,
 * never looser, than it would otherwise be.
 */
import type { CallScope } from '../../workflows/catalog/index.js';
import type { AppAction } from '../../workflows/policy.js';
import { scopeOfMethod } from '../../workflows/policy.js';
import type { OpenApiApp } from '../db/openapi-apps.js';
import type { OperationStanding } from './operation-standing.js';

/** An operation of a snapshot as far as the proxy needs it: no descriptor, no schemas. */
export interface ProxyOperationRow {
  /** The snapshot it is in. */
  version: number;
  name: string;
  method: string;
  /** The document's path template, relative to the base URL (`/pets/{id}`). */
  path: string;
  /** The grade the snapshot pinned (the document's or the method's), before any override. */
  grade: CallScope;
}

/** An app with the operations of its accepted and newest snapshots. */
export interface OpenApiProxyView {
  app: OpenApiApp;
  /** null: no snapshot accepted. */
  acceptedVersion: number | null;
  latestVersion: number | null;
  operations: readonly ProxyOperationRow[];
}

/** How a proxy request is graded, and what policy bounds it by. */
export interface ProxyGrading {
  /** The strictest of the method's grade and the matched operations' grades. */
  scope: CallScope;
  /** Names of the operations of the accepted or the newest snapshot the request matches. */
  matchedNames: string[];
  /** The matched operations of the accepted snapshot, as actions at their grades. */
  matched: AppAction[];
  /** Every operation of the accepted snapshot, as actions at their grades. */
  actions: AppAction[];
}

const STRICTNESS: Record<CallScope, number> = { read: 0, write: 1, destructive: 2 };

function stricter(a: CallScope, b: CallScope): CallScope {
  return STRICTNESS[b] > STRICTNESS[a] ? b : a;
}

/** Percent-decoded and lower-cased; a malformed escape stays as written (still lower-cased). */
function folded(segment: string): string {
  try {
    return decodeURIComponent(segment).toLowerCase();
  } catch {
    return segment.toLowerCase();
  }
}

const segmentsOf = (path: string): string[] => path.split('/').filter((part) => part !== '');

const templates = new Map<string, RegExp | string>();

/**
 * A template segment as what it matches: a literal (folded), or, where it has `{param}`s, a
 * pattern in which each matches one or more characters of the segment.
 */
function segmentMatcher(segment: string): RegExp | string {
  let matcher = templates.get(segment);
  if (matcher !== undefined) return matcher;
  if (!/\{[^{}]*\}/.test(segment)) {
    matcher = folded(segment);
  } else {
    const parts = segment.split(/\{[^{}]*\}/);
    const source = parts
      .map((part) => folded(part).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.+');
    matcher = new RegExp(`^${source}$`, 's');
  }
  if (templates.size > 10_000) templates.clear();
  templates.set(segment, matcher);
  return matcher;
}

/**
 * Whether the canonical proxy path (below `/v1/proxy/{app}/`, as `canonicalProxyPath` gives it)
 * is an instance of the path template. Empty segments (a trailing slash) are ignored on both.
 */
export function templateMatches(template: string, path: string): boolean {
  const wanted = segmentsOf(template);
  const given = segmentsOf(path);
  if (wanted.length !== given.length) return false;
  return wanted.every((segment, at) => {
    const matcher = segmentMatcher(segment);
    const actual = folded(given[at] ?? '');
    return typeof matcher === 'string' ? matcher === actual : matcher.test(actual);
  });
}

/** A HEAD is served by the GET handler at most servers: it is that operation too. */
function methodMatches(operation: string, request: string): boolean {
  const method = request.toUpperCase();
  return operation === method || (method === 'HEAD' && operation === 'GET');
}

function gradeOf(app: OpenApiApp, row: ProxyOperationRow): CallScope {
  return Object.hasOwn(app.gradeOverrides, row.name)
    ? (app.gradeOverrides[row.name] ?? row.grade)
    : row.grade;
}

/**
 * The grading of a proxy request `method path` (the canonical path) to the app: the operations
 * of the accepted or the newest snapshot it matches, and the scope it is judged at.
 */
export function proxyGrading(view: OpenApiProxyView, method: string, path: string): ProxyGrading {
  const { app } = view;
  let scope = scopeOfMethod(method);
  const matchedNames = new Set<string>();
  const matched: AppAction[] = [];
  const actions: AppAction[] = [];
  for (const row of view.operations) {
    const grade = gradeOf(app, row);
    const accepted = row.version === view.acceptedVersion;
    if (accepted) actions.push({ action: `${app.id}.${row.name}`, scope: grade });
    if (!methodMatches(row.method, method) || !templateMatches(row.path, path)) continue;
    scope = stricter(scope, grade);
    matchedNames.add(row.name);
    if (accepted) matched.push({ action: `${app.id}.${row.name}`, scope: grade });
  }
  return { scope, matchedNames: [...matchedNames].sort(), matched, actions };
}

/**
 * Why a proxy request may not reach the app, or null when policy decides. The pinning rule
 * holds through the proxy: a request that matches an operation not callable now (changed, new or
 * removed since the accepted snapshot, outside the allow-list, needing a credential) is refused
 * naming it, as a call of the operation is. An app no operator has accepted a snapshot of is
 * refused whole, as its operations are. With an allow-list, a request that matches no operation
 * is refused: the importer keeps nothing of the operations the list leaves out, so one of them
 * cannot be told from an endpoint the document lacks. The scope is checked as when the call was
 * made: a grade changed since (an override) is refused, as for operations.
 */
export function proxyPinningRefusal(
  view: OpenApiProxyView,
  grading: ProxyGrading,
  standings: readonly (OperationStanding | null)[],
  madeAt: CallScope,
): string | null {
  const { app } = view;
  const subject = `the proxy request to app "${app.id}"`;
  if (view.acceptedVersion === null) {
    return `${subject}: app "${app.id}" has no accepted snapshot, so neither its operations nor its proxy can be called until an operator accepts one`;
  }
  for (const standing of standings) {
    if (standing && !standing.callable) {
      return `${subject} is operation "${standing.descriptor.name}", which cannot be called: ${standing.reason}`;
    }
  }
  if (grading.matchedNames.length === 0 && app.operationAllowlist !== null) {
    return `${subject} matches none of its operations, and the app has an operation allow-list: an operation the list leaves out is not kept, so the proxy cannot tell it from an endpoint the document lacks`;
  }
  if (grading.scope !== madeAt) {
    return `${subject} is graded ${grading.scope} now, not ${madeAt} as when the call was made; make the call again`;
  }
  return null;
}
