import { z } from 'zod';
import { defineAction, type UpstreamResponse } from '../types.js';

// Linear's API is GraphQL: one endpoint, and each action is one named operation. A query reads;
// a mutation writes.

const uuid = z.guid();
const issueRef = z
  .string()
  .regex(
    /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[A-Za-z0-9]{1,10}-\d{1,9})$/,
  )
  .meta({ description: 'An issue id or its identifier, e.g. ENG-123' });
const first = z.number().int().min(1).max(100).default(50);
const after = z
  .string()
  .min(1)
  .max(500)
  .optional()
  .meta({ description: '`pageInfo.endCursor` of the previous page' });
const priority = z
  .number()
  .int()
  .min(0)
  .max(4)
  .meta({ description: '0 none, 1 urgent, 2 high, 3 medium, 4 low' });
const issueFields = {
  description: z.string().max(100_000).optional().meta({ description: 'Markdown' }),
  priority: priority.optional(),
  assigneeId: uuid.optional().meta({ description: 'A user id' }),
  stateId: uuid.optional().meta({ description: 'A workflow state id of the team' }),
  labelIds: z.array(uuid).max(50).optional(),
  dueDate: z.iso.date().optional().meta({ description: 'YYYY-MM-DD' }),
};

const ISSUE_FIELDS =
  'id identifier title url priority updatedAt state { name type } assignee { id name } team { key }';

const graphql = (query: string, variables: Record<string, unknown>) => ({
  method: 'POST' as const,
  path: '/graphql',
  body: { query, variables },
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The operation's own field out of `{data: {...}}`. Answers carrying GraphQL `errors` never get
 * here: the app's `reportsFailure` makes them `{ok: false, data: <the whole body>}`, partial
 * `data` included, so the caller sees what did and did not happen.
 */
const field =
  (name: string) =>
  ({ body }: UpstreamResponse): unknown =>
    isRecord(body) && isRecord(body.data) ? body.data[name] : body;

/** Linear GraphQL API: teams and issues. */
export const linearActions = [
  defineAction({
    app: 'linear',
    name: 'list_teams',
    scope: 'read',
    description: 'List the teams the user can see, with the ids that issues need.',
    input: z.strictObject({ first, after }),
    request: (variables) =>
      graphql(
        'query ListTeams($first: Int!, $after: String) { teams(first: $first, after: $after) { nodes { id key name } pageInfo { hasNextPage endCursor } } }',
        variables,
      ),
    result: field('teams'),
  }),
  defineAction({
    app: 'linear',
    name: 'list_issues',
    scope: 'read',
    description:
      'List issues, most recently updated first, optionally of one team, state or assignee.',
    input: z.strictObject({
      teamId: uuid.optional(),
      stateType: z
        .enum(['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled'])
        .optional(),
      assignedToMe: z.boolean().optional(),
      first,
      after,
    }),
    request: ({ teamId, stateType, assignedToMe, ...page }) =>
      graphql(
        `query ListIssues($first: Int!, $after: String, $filter: IssueFilter) { issues(first: $first, after: $after, filter: $filter, orderBy: updatedAt) { nodes { ${ISSUE_FIELDS} } pageInfo { hasNextPage endCursor } } }`,
        {
          ...page,
          filter: {
            ...(teamId ? { team: { id: { eq: teamId } } } : {}),
            ...(stateType ? { state: { type: { eq: stateType } } } : {}),
            ...(assignedToMe ? { assignee: { isMe: { eq: true } } } : {}),
          },
        },
      ),
    result: field('issues'),
  }),
  defineAction({
    app: 'linear',
    name: 'get_issue',
    scope: 'read',
    description: 'Get one issue with its description, state, assignee and labels.',
    input: z.strictObject({ id: issueRef }),
    request: (variables) =>
      graphql(
        `query GetIssue($id: String!) { issue(id: $id) { ${ISSUE_FIELDS} description dueDate labels { nodes { id name } } } }`,
        variables,
      ),
    result: field('issue'),
  }),
  defineAction({
    app: 'linear',
    name: 'create_issue',
    scope: 'write',
    description: 'Create an issue in a team.',
    input: z.strictObject({ teamId: uuid, title: z.string().min(1).max(255), ...issueFields }),
    request: (input) =>
      graphql(
        `mutation CreateIssue($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { ${ISSUE_FIELDS} } } }`,
        { input },
      ),
    result: field('issueCreate'),
  }),
  defineAction({
    app: 'linear',
    name: 'update_issue',
    scope: 'write',
    description:
      "Change an issue's title, description, priority, assignee, state, labels or due date.",
    input: z
      .strictObject({ id: issueRef, title: z.string().min(1).max(255).optional(), ...issueFields })
      .refine(
        (input: object) =>
          Object.entries(input).some(([key, value]) => key !== 'id' && value !== undefined),
        'Nothing to change',
      ),
    request: ({ id, ...input }) =>
      graphql(
        `mutation UpdateIssue($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { success issue { ${ISSUE_FIELDS} } } }`,
        { id, input },
      ),
    result: field('issueUpdate'),
  }),
  defineAction({
    app: 'linear',
    name: 'add_comment',
    scope: 'write',
    description: 'Comment on an issue.',
    input: z.strictObject({
      issueId: uuid.meta({ description: "The issue's id (get_issue gives it for an identifier)" }),
      body: z.string().min(1).max(100_000).meta({ description: 'Markdown' }),
    }),
    request: (input) =>
      graphql(
        'mutation AddComment($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id url } } }',
        { input },
      ),
    result: field('commentCreate'),
  }),
  defineAction({
    app: 'linear',
    name: 'archive_issue',
    scope: 'destructive',
    description: 'Archive an issue, taking it out of every list and view.',
    input: z.strictObject({ id: issueRef }),
    request: (variables) =>
      graphql(
        'mutation ArchiveIssue($id: String!) { issueArchive(id: $id) { success } }',
        variables,
      ),
    result: field('issueArchive'),
  }),
];
