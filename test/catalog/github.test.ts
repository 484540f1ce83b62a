import { describe, expect, it } from '@jest/globals';
import { identityAt } from '../../activities/oauth/account-identity.js';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`github.${name}`);
  if (!found) throw new Error(`no action github.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;

const repo = { owner: 'octo-org', repo: 'hello.world' };

describe('github actions', () => {
  it('lists the user’s repositories with list parameters joined as GitHub wants them', () => {
    expect(
      requestFor('list_repos', { affiliation: ['owner', 'organization_member'], per_page: 50 }),
    ).toEqual({
      method: 'GET',
      path: '/user/repos',
      query: { affiliation: 'owner,organization_member', per_page: 50 },
    });
    expect(accepts('list_repos', { per_page: 101 })).toBe(false);
    expect(accepts('list_repos', { visibility: 'secret' })).toBe(false);
  });

  it('encodes every path segment', () => {
    expect(action('get_issue').request({ owner: 'a/b c', repo: '../x', issue_number: 7 })).toEqual({
      method: 'GET',
      path: '/repos/a%2Fb%20c/..%2Fx/issues/7',
    });
  });

  it('rejects owners and repositories that are not GitHub names, and dot segments', () => {
    expect(accepts('get_issue', { ...repo, issue_number: 1 })).toBe(true);
    expect(accepts('get_issue', { owner: 'a/b c', repo: 'x', issue_number: 1 })).toBe(false);
    expect(accepts('get_issue', { owner: 'octo', repo: '..', issue_number: 1 })).toBe(false);
    expect(accepts('get_issue', { owner: 'octo', repo: 'a/b', issue_number: 1 })).toBe(false);
  });

  it('lists issues with labels comma-separated', () => {
    expect(
      requestFor('list_issues', { ...repo, state: 'all', labels: ['bug', 'p1'], per_page: 10 }),
    ).toEqual({
      method: 'GET',
      path: '/repos/octo-org/hello.world/issues',
      query: { state: 'all', labels: 'bug,p1', per_page: 10 },
    });
    expect(accepts('list_issues', { ...repo, since: '2026-01-01' })).toBe(false);
    expect(accepts('list_issues', { ...repo, since: '2026-01-01T00:00:00Z' })).toBe(true);
  });

  it('creates an issue with a JSON body of the issue fields only', () => {
    expect(
      requestFor('create_issue', { ...repo, title: 'Crash on start', labels: ['bug'] }),
    ).toEqual({
      method: 'POST',
      path: '/repos/octo-org/hello.world/issues',
      body: { title: 'Crash on start', labels: ['bug'] },
    });
  });

  it.each([
    ['a missing title', { ...repo }],
    ['an empty title', { ...repo, title: '' }],
    ['a title too long', { ...repo, title: 'x'.repeat(257) }],
    ['an unknown field', { ...repo, title: 't', priority: 'high' }],
    ['labels of the wrong type', { ...repo, title: 't', labels: 'bug' }],
    ['too many assignees', { ...repo, title: 't', assignees: Array(11).fill('octocat') }],
  ])('refuses to create an issue with %s', (_case, input) => {
    expect(accepts('create_issue', input)).toBe(false);
  });

  it('updates an issue with only the fields given, and refuses an update that changes nothing', () => {
    expect(
      requestFor('update_issue', {
        ...repo,
        issue_number: 12,
        state: 'closed',
        state_reason: 'not_planned',
      }),
    ).toEqual({
      method: 'PATCH',
      path: '/repos/octo-org/hello.world/issues/12',
      body: { state: 'closed', state_reason: 'not_planned' },
    });
    expect(accepts('update_issue', { ...repo, issue_number: 12 })).toBe(false);
    expect(accepts('update_issue', { ...repo, issue_number: 0, state: 'open' })).toBe(false);
    expect(accepts('update_issue', { ...repo, issue_number: '12', state: 'open' })).toBe(false);
    expect(accepts('update_issue', { ...repo, issue_number: 1.5, state: 'open' })).toBe(false);
  });

  it('comments on an issue', () => {
    expect(requestFor('add_issue_comment', { ...repo, issue_number: 3, body: 'LGTM' })).toEqual({
      method: 'POST',
      path: '/repos/octo-org/hello.world/issues/3/comments',
      body: { body: 'LGTM' },
    });
    expect(accepts('add_issue_comment', { ...repo, issue_number: 3, body: '' })).toBe(false);
  });

  it('deletes a comment as a destructive call and reports it deleted', () => {
    const remove = action('delete_issue_comment');
    expect(remove.scope).toBe('destructive');
    expect(requestFor('delete_issue_comment', { ...repo, comment_id: 99 })).toEqual({
      method: 'DELETE',
      path: '/repos/octo-org/hello.world/issues/comments/99',
    });
    expect(remove.result?.({ status: 204, headers: {}, body: null })).toEqual({ deleted: true });
  });

  it('grades reads as read and changes as write', () => {
    const scopes = Object.fromEntries(listActions('github').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      list_repos: 'read',
      list_issues: 'read',
      get_issue: 'read',
      create_issue: 'write',
      update_issue: 'write',
      add_issue_comment: 'write',
      delete_issue_comment: 'destructive',
    });
  });

  it('asks for the repo scope, which grades read and write', () => {
    const app = findApp('github');
    if (!app) throw new Error('no github app');
    expect(app.oauth.defaultScopes).toEqual(['repo']);
    expect(gradeScopes(app, ['repo'])).toEqual(['read', 'write']);
    expect(gradeScopes(app, ['read:user'])).toEqual(['read']);
    expect(app.apiHeaders).toEqual({
      Accept: 'application/vnd.github+json',
      'X-GitHub-Api-Version': '2022-11-28',
    });
  });
});

describe('the account behind a github connection', () => {
  it('is the numeric id of GET /user, not the login a user can rename', () => {
    const identity = findApp('github')?.accountIdentity;
    if (identity?.from !== 'api') throw new Error('github learns the account from its API');
    expect(identity.request).toEqual({ method: 'GET', path: '/user' });
    // From GitHub's "Get the authenticated user" example.
    const user = { login: 'octocat', id: 1, node_id: 'MDQ6VXNlcjE=', type: 'User' };
    expect(identityAt(user, identity.fields)).toBe('1');
  });
});
