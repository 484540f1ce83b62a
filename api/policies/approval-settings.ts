import { z } from 'zod';
import { MAX_QUORUM, quorumProblem } from '../../workflows/decider-rules.js';
import {
  approvalSettings,
  type ApprovalSettings,
  type PolicyRule,
} from '../../workflows/policy.js';
import { InvalidRequestError, type Issue } from '../errors.js';

/** Anything with one `@` between non-blank parts: the identity provider's claim is the judge. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * One `requested_from` entry: `person:<email>`, `group:<name>` (a group of the identity
 * provider), or a bare name, which is a key's agent id (`admin`), as entries always were. `role:`
 * is not a decider but the addressee of the generic decision link.
 */
export const deciderEntry = z
  .string()
  .min(1)
  .max(200)
  .superRefine((entry, ctx) => {
    if (entry.startsWith('person:') && !EMAIL.test(entry.slice('person:'.length))) {
      ctx.addIssue({ code: 'custom', message: 'person:<email> needs an email after person:' });
    } else if (entry.startsWith('group:') && !/^\S+$/.test(entry.slice('group:'.length))) {
      ctx.addIssue({ code: 'custom', message: 'group:<name> needs a group name, without spaces' });
    } else if (entry.startsWith('role:')) {
      ctx.addIssue({
        code: 'custom',
        message:
          'role: names no decider; name a person (person:<email>), a group (group:<name>) or an API key by its agent id',
      });
    }
  })
  .meta({
    description:
      '`person:<email>` (a person who signs in), `group:<name>` (anyone in that group of the identity provider), or a bare name: the agent id of an API key with `approvals:decide` (e.g. `admin`)',
    example: 'group:finance',
  });

export const requestedFromSchema = z.array(deciderEntry).max(50).meta({
  description: 'Who may decide; empty means anyone allowed to decide, never the agent',
});

export const quorumSchema = z
  .int()
  .min(1)
  .max(MAX_QUORUM)
  .meta({
    description: `How many different deciders must approve before the call runs (1 to ${String(MAX_QUORUM)}; one rejection rejects). Without a group among \`requested_from\`, at most the number of deciders it names`,
  });

export const ttlSecondsSchema = z
  .int()
  .min(1)
  .max(30 * 24 * 3600);

/** A rule's own approval settings: allowed on a rule whose decision is `ask`. */
export const ruleApprovalSchema = z
  .strictObject({
    requested_from: requestedFromSchema.optional(),
    quorum: quorumSchema.optional(),
    ttl_seconds: ttlSecondsSchema.optional(),
  })
  .meta({
    description:
      "Only on a rule that asks: who decides the calls it holds, how many must approve, how long they have; each setting left out is the policy's `approval` one",
  });

/**
 * Why approvals under these settings could never be decided: a quorum more than the different
 * deciders that could be asked (the policy's, and each asking rule's with what it inherits).
 */
export function approvalSettingsIssues(
  approval: ApprovalSettings,
  rules: readonly PolicyRule[],
): Issue[] {
  const issues: Issue[] = [];
  const own = quorumProblem(approval.requested_from, approval.quorum ?? 1);
  if (own !== null) issues.push({ path: 'approval.quorum', message: own });
  rules.forEach((rule, index) => {
    if (rule.approval === undefined) return;
    const settings = approvalSettings(approval, rule.approval);
    const problem = quorumProblem(settings.requested_from, settings.quorum ?? 1);
    if (problem === null) return;
    // Named where it comes from: the rule's quorum, or the rule's requested_from under the
    // policy's quorum.
    const field = rule.approval.quorum === undefined ? 'requested_from' : 'quorum';
    issues.push({ path: `rules.${String(index)}.approval.${field}`, message: problem });
  });
  return issues;
}

/** Refuses (400) settings under which approvals could never be decided. */
export function checkApprovalSettings(
  approval: ApprovalSettings,
  rules: readonly PolicyRule[],
): void {
  const issues = approvalSettingsIssues(approval, rules);
  const [first] = issues;
  if (!first) return;
  throw new InvalidRequestError(`Invalid request body (${first.path}: ${first.message}).`, issues);
}
