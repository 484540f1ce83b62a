import { describe, expect, it } from '@jest/globals';
import { identityAt } from '../../activities/oauth/account-identity.js';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`notion.${name}`);
  if (!found) throw new Error(`no action notion.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;

const pageId = '59833787-2cf9-4fdf-8782-e53db20768a5';
const compactId = '598337872cf94fdf8782e53db20768a5';
const text = (content: string) => [{ type: 'text', text: { content } }];

describe('notion actions', () => {
  it('searches with Notion’s filter and sort objects', () => {
    expect(
      requestFor('search', { query: 'roadmap', only: 'data_source', sort: 'descending' }),
    ).toEqual({
      method: 'POST',
      path: '/v1/search',
      body: {
        query: 'roadmap',
        filter: { property: 'object', value: 'data_source' },
        sort: { direction: 'descending', timestamp: 'last_edited_time' },
      },
    });
    expect(accepts('search', { only: 'database' })).toBe(false);
    expect(accepts('search', { page_size: 101 })).toBe(false);
  });

  it('reads a page by an id with or without dashes, encoded in the path', () => {
    expect(requestFor('get_page', { page_id: compactId })).toEqual({
      method: 'GET',
      path: `/v1/pages/${compactId}`,
    });
    expect(accepts('get_page', { page_id: pageId })).toBe(true);
    expect(accepts('get_page', { page_id: 'a/b c' })).toBe(false);
    expect(action('get_page').request({ page_id: 'a/b c' })).toEqual({
      method: 'GET',
      path: '/v1/pages/a%2Fb%20c',
    });
    expect(requestFor('get_block_children', { block_id: pageId, page_size: 50 })).toEqual({
      method: 'GET',
      path: `/v1/blocks/${pageId}/children`,
      query: { page_size: 50 },
    });
  });

  it('creates a page under a page with its title and text content', () => {
    expect(
      requestFor('create_page', {
        parent: { page_id: pageId },
        title: 'Meeting notes',
        content: [{ type: 'heading_2', text: 'Agenda' }, { text: 'First point' }],
      }),
    ).toEqual({
      method: 'POST',
      path: '/v1/pages',
      body: {
        parent: { page_id: pageId },
        properties: { title: { title: text('Meeting notes') } },
        children: [
          { object: 'block', type: 'heading_2', heading_2: { rich_text: text('Agenda') } },
          { object: 'block', type: 'paragraph', paragraph: { rich_text: text('First point') } },
        ],
      },
    });
  });

  it('creates a data source row with property values besides the title', () => {
    const status = { status: { name: 'Done' } };
    expect(
      requestFor('create_page', {
        parent: { data_source_id: compactId },
        title: 'Ship it',
        properties: { Status: status },
      }).body,
    ).toEqual({
      parent: { data_source_id: compactId },
      properties: { Status: status, title: { title: text('Ship it') } },
    });
  });

  it.each([
    ['no parent', { title: 't' }],
    ['two parents', { parent: { page_id: pageId, data_source_id: pageId }, title: 't' }],
    [
      'a database parent (data sources replaced it)',
      { parent: { database_id: pageId }, title: 't' },
    ],
    ['properties under a page', { parent: { page_id: pageId }, title: 't', properties: { A: {} } }],
    ['an empty title', { parent: { page_id: pageId }, title: '' }],
    [
      'text over 2000 characters',
      { parent: { page_id: pageId }, title: 't', content: [{ text: 'x'.repeat(2001) }] },
    ],
    [
      'an unknown block type',
      { parent: { page_id: pageId }, title: 't', content: [{ type: 'video', text: 'x' }] },
    ],
  ])('refuses to create a page with %s', (_case, input) => {
    expect(accepts('create_page', input)).toBe(false);
  });

  it('updates a page, and trashes one with in_trash as a destructive call', () => {
    expect(
      requestFor('update_page', { page_id: pageId, title: 'Renamed', icon_emoji: '📌' }),
    ).toEqual({
      method: 'PATCH',
      path: `/v1/pages/${pageId}`,
      body: {
        properties: { title: { title: text('Renamed') } },
        icon: { type: 'emoji', emoji: '📌' },
      },
    });
    expect(accepts('update_page', { page_id: pageId })).toBe(false);
    expect(accepts('update_page', { page_id: pageId, archived: true })).toBe(false);
    expect(action('trash_page').scope).toBe('destructive');
    expect(requestFor('trash_page', { page_id: pageId })).toEqual({
      method: 'PATCH',
      path: `/v1/pages/${pageId}`,
      body: { in_trash: true },
    });
  });

  it('queries a data source', () => {
    const filter = { property: 'Status', status: { equals: 'Done' } };
    const sorts = [{ timestamp: 'last_edited_time', direction: 'descending' }];
    expect(
      requestFor('query_data_source', { data_source_id: compactId, filter, sorts, page_size: 10 }),
    ).toEqual({
      method: 'POST',
      path: `/v1/data_sources/${compactId}/query`,
      body: { filter, sorts, page_size: 10 },
    });
    expect(
      accepts('query_data_source', {
        data_source_id: compactId,
        sorts: [{ property: 'Due', direction: 'up' }],
      }),
    ).toBe(false);
  });

  it('appends blocks at the end, at the start, or after a block', () => {
    const blocks = [{ type: 'to_do', text: 'Call Ana' }];
    const children = [{ object: 'block', type: 'to_do', to_do: { rich_text: text('Call Ana') } }];
    expect(requestFor('append_block_children', { block_id: pageId, blocks })).toEqual({
      method: 'PATCH',
      path: `/v1/blocks/${pageId}/children`,
      body: { children },
    });
    expect(
      requestFor('append_block_children', { block_id: pageId, blocks, at_start: true }).body,
    ).toEqual({ children, position: { type: 'start' } });
    expect(
      requestFor('append_block_children', { block_id: pageId, blocks, after_block_id: compactId })
        .body,
    ).toEqual({ children, position: { type: 'after_block', after_block: { id: compactId } } });
    expect(
      accepts('append_block_children', {
        block_id: pageId,
        blocks,
        at_start: true,
        after_block_id: compactId,
      }),
    ).toBe(false);
    expect(accepts('append_block_children', { block_id: pageId, blocks: [] })).toBe(false);
    expect(
      accepts('append_block_children', {
        block_id: pageId,
        blocks: Array(101).fill({ text: 'x' }),
      }),
    ).toBe(false);
  });

  it('grades reads as read, changes as write and trashing as destructive', () => {
    const scopes = Object.fromEntries(listActions('notion').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      search: 'read',
      get_page: 'read',
      get_block_children: 'read',
      create_page: 'write',
      update_page: 'write',
      trash_page: 'destructive',
      query_data_source: 'read',
      append_block_children: 'write',
    });
  });

  it('pins the API version and authorizes as a user, without scopes', () => {
    const app = findApp('notion');
    if (!app) throw new Error('no notion app');
    expect(app.apiHeaders).toEqual({ 'Notion-Version': '2026-03-11' });
    expect(app.oauth.extraAuthorizationParams).toEqual({ owner: 'user' });
    expect(app.oauth.tokenEndpointAuthMethod).toBe('client_secret_basic');
    expect(app.oauth.defaultScopes).toEqual([]);
    expect(gradeScopes(app, [])).toEqual([]);
  });
});

describe('the account behind a notion connection', () => {
  it('is the authorizing user within the workspace, from the token answer', () => {
    const identity = findApp('notion')?.accountIdentity;
    if (identity?.from !== 'token_response') throw new Error('notion names it in the token answer');
    // The shape of Notion's token answer for an integration authorized by a user.
    const answer = {
      access_token: 'secret',
      bot_id: 'b3414d65-1224-5ty7-6ffr-cc9d8773drt6',
      owner: { type: 'user', user: { object: 'user', id: '4d4a1ab2-0b29-4b77-8c89-c1e0a0b4d2f5' } },
      workspace_id: 'j565j4d7-x3nt-bm91-a1e4-2b8d5c6e7f80',
      workspace_name: 'Acme',
    };
    expect(identityAt(answer, identity.fields)).toBe(
      JSON.stringify([
        'j565j4d7-x3nt-bm91-a1e4-2b8d5c6e7f80',
        '4d4a1ab2-0b29-4b77-8c89-c1e0a0b4d2f5',
      ]),
    );
    // A workspace-owned integration names no user: no account, rather than a shared one.
    expect(identityAt({ ...answer, owner: { workspace: true } }, identity.fields)).toBeUndefined();
  });
});
