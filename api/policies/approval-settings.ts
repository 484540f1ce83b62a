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

/** Seconds after the call was held; within the longest approval. */
const afterSeconds = (description: string) =>
  z
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .meta({ description });

/** Reminders and escalation, on the policy's `approval` and on a rule's (workflows/policy.ts). */
export const noticeSettingsSchema = {
  remind_after_seconds: afterSeconds(
    'Tell those asked again (e-mail, Slack, Teams) when nobody has settled the approval this many seconds after the call was held; before `ttl_seconds`',
  ).optional(),
  escalate_after_seconds: afterSeconds(
    'Ask `escalate_to` too, and tell them, when the approval is still unsettled this many seconds after the call was held; before `ttl_seconds`, with `escalate_to`',
  ).optional(),
  escalate_to: z.array(deciderEntry).min(1).max(50).optional().meta({
    description:
      'Who is asked when the approval escalates (entries as in `requested_from`), with `escalate_after_seconds`',
  }),
};

/** A rule's own approval settings: allowed on a rule whose decision is `ask`. */
export const ruleApprovalSchema = z
  .strictObject({
    requested_from: requestedFromSchema.optional(),
    quorum: quorumSchema.optional(),
    ttl_seconds: ttlSecondsSchema.optional(),
    ...noticeSettingsSchema,
  })
  .meta({
    description:
      "Only on a rule that asks: who decides the calls it holds, how many must approve, how long they have, when they are reminded and to whom it escalates; each setting left out is the policy's `approval` one (escalation is one setting: naming either of its fields replaces both)",
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
  for (const { field, message } of noticeProblems(approval)) {
    issues.push({ path: `approval.${field}`, message });
  }
  rules.forEach((rule, index) => {
    if (rule.approval === undefined) return;
    const settings = approvalSettings(approval, rule.approval);
    for (const { field, message } of noticeProblems(settings)) {
      issues.push({ path: `rules.${String(index)}.approval.${field}`, message });
    }
    const problem = quorumProblem(settings.requested_from, settings.quorum ?? 1);
    if (problem === null) return;
    // Named where it comes from: the rule's quorum, or the rule's requested_from under the
    // policy's quorum.
    const field = rule.approval.quorum === undefined ? 'requested_from' : 'quorum';
    issues.push({ path: `rules.${String(index)}.approval.${field}`, message: problem });
  });
  return issues;
}

/**
 * Why reminders or escalation under these settings would never happen or could not be followed:
 * a moment at or past the expiry, or escalation with only one of its two fields.
 */
function noticeProblems(settings: ApprovalSettings): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  const { ttl_seconds: ttl } = settings;
  if (settings.remind_after_seconds !== undefined && settings.remind_after_seconds >= ttl) {
    problems.push({
      field: 'remind_after_seconds',
      message: `must be less than ttl_seconds (${String(ttl)}): the approval expires first`,
    });
  }
  const after = settings.escalate_after_seconds;
  const to = settings.escalate_to;
  if (after !== undefined && (to === undefined || to.length === 0)) {
    problems.push({ field: 'escalate_to', message: 'escalate_after_seconds needs escalate_to' });
  } else if (after === undefined && to !== undefined) {
    problems.push({
      field: 'escalate_after_seconds',
      message: 'escalate_to needs escalate_after_seconds',
    });
  } else if (after !== undefined && after >= ttl) {
    problems.push({
      field: 'escalate_after_seconds',
      message: `must be less than ttl_seconds (${String(ttl)}): the approval expires first`,
    });
  }
  return problems;
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
