import { describe, expect, it } from '@jest/globals';
import { identityAt } from '../../activities/oauth/account-identity.js';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`linear.${name}`);
  if (!found) throw new Error(`no action linear.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;
const ok = (body: unknown) => ({ status: 200, headers: {}, body });

const teamId = '2b3c4d5e-6f70-4a81-9b2c-3d4e5f607182';
const issueId = '9a8b7c6d-5e4f-4321-8fed-cba987654321';

describe('linear actions', () => {
  it('sends every action as one GraphQL operation, a query for reads and a mutation for writes', () => {
    const samples: Record<string, unknown> = {
      list_teams: {},
      list_issues: {},
      get_issue: { id: 'ENG-123' },
      create_issue: { teamId, title: 't' },
      update_issue: { id: issueId, title: 't' },
      add_comment: { issueId, body: 'b' },
      archive_issue: { id: issueId },
    };
    expect(listActions('linear').map((a) => a.name)).toEqual(Object.keys(samples));
    for (const definition of listActions('linear')) {
      const request = requestFor(definition.name, samples[definition.name]);
      expect(request).toMatchObject({ method: 'POST', path: '/graphql' });
      const { query } = request.body as { query: string };
      expect(query).toMatch(definition.scope === 'read' ? /^query \w+/ : /^mutation \w+/);
    }
  });

  it('lists issues with a filter built from the options given', () => {
    const request = requestFor('list_issues', {
      teamId,
      stateType: 'started',
      assignedToMe: true,
      first: 20,
    });
    expect((request.body as { variables: unknown }).variables).toEqual({
      first: 20,
      filter: {
        team: { id: { eq: teamId } },
        state: { type: { eq: 'started' } },
        assignee: { isMe: { eq: true } },
      },
    });
    expect((requestFor('list_issues', {}).body as { variables: unknown }).variables).toEqual({
      first: 50,
      filter: {},
    });
    expect(accepts('list_issues', { first: 101 })).toBe(false);
    expect(accepts('list_issues', { stateType: 'done' })).toBe(false);
  });

  it('creates an issue with its fields as the mutation input', () => {
    const request = requestFor('create_issue', {
      teamId,
      title: 'Login fails',
      priority: 2,
      dueDate: '2026-06-30',
    });
    expect((request.body as { variables: unknown }).variables).toEqual({
      input: { teamId, title: 'Login fails', priority: 2, dueDate: '2026-06-30' },
    });
  });

  it.each([
    ['no team', { title: 't' }],
    ['a team id that is not a UUID', { teamId: 'ENG', title: 't' }],
    ['an empty title', { teamId, title: '' }],
    ['a priority out of range', { teamId, title: 't', priority: 5 }],
    ['a due date with a time', { teamId, title: 't', dueDate: '2026-06-30T10:00:00Z' }],
    ['an unknown field', { teamId, title: 't', estimate: 3 }],
  ])('refuses to create an issue with %s', (_case, input) => {
    expect(accepts('create_issue', input)).toBe(false);
  });

  it('updates an issue by id or identifier, and refuses an update that changes nothing', () => {
    expect(
      (requestFor('update_issue', { id: 'ENG-42', stateId: teamId }).body as { variables: unknown })
        .variables,
    ).toEqual({ id: 'ENG-42', input: { stateId: teamId } });
    expect(accepts('update_issue', { id: 'ENG-42' })).toBe(false);
    expect(accepts('get_issue', { id: 'ENG 42' })).toBe(false);
    expect(accepts('get_issue', { id: 'a/b c' })).toBe(false);
  });

  it('returns the operation’s own field, or the whole body when GraphQL reports errors', () => {
    const get = action('get_issue');
    expect(get.result?.(ok({ data: { issue: { id: issueId } } }))).toEqual({ id: issueId });
    const failed = { data: null, errors: [{ message: 'Entity not found' }] };
    expect(get.result?.(ok(failed))).toEqual(failed);
    expect(
      action('archive_issue').result?.(ok({ data: { issueArchive: { success: true } } })),
    ).toEqual({ success: true });
  });

  it('grades reads as read, changes as write and archiving as destructive', () => {
    const scopes = Object.fromEntries(listActions('linear').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      list_teams: 'read',
      list_issues: 'read',
      get_issue: 'read',
      create_issue: 'write',
      update_issue: 'write',
      add_comment: 'write',
      archive_issue: 'destructive',
    });
  });

  it('asks for read and write, comma-separated', () => {
    const app = findApp('linear');
    if (!app) throw new Error('no linear app');
    expect(app.oauth.defaultScopes.join(app.oauth.scopeSeparator)).toBe('read,write');
    expect(gradeScopes(app, ['read'])).toEqual(['read']);
    expect(gradeScopes(app, ['read', 'write'])).toEqual(['read', 'write']);
    expect(gradeScopes(app, ['issues:create'])).toEqual(['write']);
  });
});

describe('linear failures inside a 200', () => {
  const linear = findApp('linear');
  it('are recognised by their GraphQL errors', () => {
    expect(linear?.reportsFailure?.({ errors: [{ message: 'Entity not found' }] })).toBe(true);
    expect(linear?.reportsFailure?.({ data: { issue: { id: 'i' } } })).toBe(false);
    expect(linear?.reportsFailure?.({ data: null, errors: [] })).toBe(false);
  });
});

describe('the account behind a linear connection', () => {
  it('is the GraphQL viewer’s id', () => {
    const identity = findApp('linear')?.accountIdentity;
    if (identity?.from !== 'api') throw new Error('linear learns the account from its API');
    expect(identity.request).toEqual({
      method: 'POST',
      path: '/graphql',
      body: { query: '{ viewer { id } }' },
    });
    const answer = { data: { viewer: { id: '2d8c1b9e-6f0a-4d1e-9c53-3a7f0e2b4c11' } } };
    expect(identityAt(answer, identity.fields)).toBe('2d8c1b9e-6f0a-4d1e-9c53-3a7f0e2b4c11');
    expect(identityAt({ data: null, errors: [{ message: 'x' }] }, identity.fields)).toBe(undefined);
  });
});
