import { z } from 'zod';
import { defineAction } from '../types.js';

const owner = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/)
  .meta({ description: 'The account that owns the repository (user or organization login)' });
const repo = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,100}$/)
  .meta({ description: 'The repository name, without the owner, e.g. hello-world' });
const issueNumber = z
  .number()
  .int()
  .positive()
  .meta({ description: 'The issue number as shown in the repository, e.g. 42' });
const labels = z.array(z.string().min(1).max(50)).max(100);
const assignees = z
  .array(z.string().min(1).max(39))
  .max(10)
  .meta({ description: 'Logins of the users to assign' });
const perPage = z.number().int().min(1).max(100).optional();
const page = z.number().int().min(1).optional();

/** Whether anything besides the identifying fields was given. */
const changesAny = (input: object, identifying: readonly string[]) =>
  Object.entries(input).some(([key, value]) => !identifying.includes(key) && value !== undefined);

const repoPath = (input: { owner: string; repo: string }) =>
  `/repos/${encodeURIComponent(input.owner)}/${encodeURIComponent(input.repo)}`;
const issuePath = (input: { owner: string; repo: string; issue_number: number }) =>
  `${repoPath(input)}/issues/${encodeURIComponent(String(input.issue_number))}`;

/** GitHub REST API: repositories, issues and issue comments of the signed-in user. */
export const githubActions = [
  defineAction({
    app: 'github',
    name: 'list_repos',
    scope: 'read',
    description: 'List repositories the user can access (owned, collaborating, or through orgs).',
    input: z.strictObject({
      visibility: z.enum(['all', 'public', 'private']).optional(),
      affiliation: z
        .array(z.enum(['owner', 'collaborator', 'organization_member']))
        .min(1)
        .optional()
        .meta({ description: "The user's relations to the repositories to include" }),
      sort: z.enum(['created', 'updated', 'pushed', 'full_name']).optional(),
      direction: z.enum(['asc', 'desc']).optional(),
      per_page: perPage,
      page,
    }),
    request: ({ affiliation, ...query }) => ({
      method: 'GET',
      path: '/user/repos',
      query: { ...query, affiliation: affiliation?.join(',') },
    }),
  }),
  defineAction({
    app: 'github',
    name: 'list_issues',
    scope: 'read',
    description: 'List issues of a repository (GitHub counts pull requests as issues too).',
    input: z.strictObject({
      owner,
      repo,
      state: z.enum(['open', 'closed', 'all']).optional(),
      labels: labels.min(1).optional().meta({ description: 'Only issues with all these labels' }),
      assignee: z
        .string()
        .min(1)
        .max(39)
        .optional()
        .meta({ description: 'A login, `none` for unassigned, or `*` for any assignee' }),
      since: z.iso
        .datetime({ offset: true })
        .optional()
        .meta({ description: 'Only issues updated at or after this time (ISO 8601)' }),
      sort: z.enum(['created', 'updated', 'comments']).optional(),
      direction: z.enum(['asc', 'desc']).optional(),
      per_page: perPage,
      page,
    }),
    request: ({ owner, repo, labels, ...query }) => ({
      method: 'GET',
      path: `${repoPath({ owner, repo })}/issues`,
      query: { ...query, labels: labels?.join(',') },
    }),
  }),
  defineAction({
    app: 'github',
    name: 'get_issue',
    scope: 'read',
    description: 'Get one issue with its title, body, state, labels and assignees.',
    input: z.strictObject({ owner, repo, issue_number: issueNumber }),
    request: (input) => ({ method: 'GET', path: issuePath(input) }),
  }),
  defineAction({
    app: 'github',
    name: 'create_issue',
    scope: 'write',
    description: 'Open an issue in a repository.',
    input: z.strictObject({
      owner,
      repo,
      title: z.string().min(1).max(256),
      body: z.string().max(65_536).optional().meta({ description: 'Markdown' }),
      labels: labels.optional().meta({ description: 'Label names; unknown ones are created' }),
      assignees: assignees.optional(),
      milestone: z.number().int().positive().optional().meta({ description: 'Milestone number' }),
    }),
    request: ({ owner, repo, ...body }) => ({
      method: 'POST',
      path: `${repoPath({ owner, repo })}/issues`,
      body,
    }),
  }),
  defineAction({
    app: 'github',
    name: 'update_issue',
    scope: 'write',
    description: "Change an issue's title, body, labels or assignees, or close or reopen it.",
    input: z
      .strictObject({
        owner,
        repo,
        issue_number: issueNumber,
        title: z.string().min(1).max(256).optional(),
        body: z.string().max(65_536).optional().meta({ description: 'Markdown' }),
        state: z.enum(['open', 'closed']).optional(),
        state_reason: z
          .enum(['completed', 'not_planned', 'reopened'])
          .optional()
          .meta({ description: 'Why the state changed; goes with `state`' }),
        labels: labels.optional().meta({ description: 'Replaces all labels; [] removes them' }),
        assignees: assignees.optional().meta({ description: 'Replaces all assignees' }),
      })
      .refine((input) => changesAny(input, ['owner', 'repo', 'issue_number']), 'Nothing to change'),
    request: ({ owner, repo, issue_number, ...body }) => ({
      method: 'PATCH',
      path: issuePath({ owner, repo, issue_number }),
      body,
    }),
  }),
  defineAction({
    app: 'github',
    name: 'add_issue_comment',
    scope: 'write',
    description: 'Comment on an issue or pull request.',
    input: z.strictObject({
      owner,
      repo,
      issue_number: issueNumber,
      body: z.string().min(1).max(65_536).meta({ description: 'Markdown' }),
    }),
    request: ({ body, ...issue }) => ({
      method: 'POST',
      path: `${issuePath(issue)}/comments`,
      body: { body },
    }),
  }),
  defineAction({
    app: 'github',
    name: 'delete_issue_comment',
    scope: 'destructive',
    description: 'Delete a comment on an issue or pull request for good.',
    input: z.strictObject({
      owner,
      repo,
      comment_id: z
        .number()
        .int()
        .positive()
        .meta({ description: 'The comment id (from the comment, not the issue number)' }),
    }),
    request: ({ comment_id, ...repository }) => ({
      method: 'DELETE',
      path: `${repoPath(repository)}/issues/comments/${encodeURIComponent(String(comment_id))}`,
    }),
    // GitHub answers 204 with no body.
    result: () => ({ deleted: true }),
  }),
];
