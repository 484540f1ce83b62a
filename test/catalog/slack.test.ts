import { describe, expect, it } from '@jest/globals';
import { identityAt } from '../../activities/oauth/account-identity.js';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`slack.${name}`);
  if (!found) throw new Error(`no action slack.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;

const json = { 'Content-Type': 'application/json; charset=utf-8' };

describe('slack actions', () => {
  it('reads with GET and query parameters', () => {
    expect(
      requestFor('list_channels', { types: ['public_channel', 'private_channel'], limit: 200 }),
    ).toEqual({
      method: 'GET',
      path: '/api/conversations.list',
      query: { types: 'public_channel,private_channel', limit: 200 },
    });
    expect(
      requestFor('get_channel_history', { channel: 'C0123ABCD', oldest: '1712345678.000100' }),
    ).toEqual({
      method: 'GET',
      path: '/api/conversations.history',
      query: { channel: 'C0123ABCD', oldest: '1712345678.000100' },
    });
  });

  it('posts a message as UTF-8 JSON, to a channel id or a channel name', () => {
    expect(
      requestFor('post_message', { channel: '#general', text: 'Déploiement terminé ✅' }),
    ).toEqual({
      method: 'POST',
      path: '/api/chat.postMessage',
      body: { channel: '#general', text: 'Déploiement terminé ✅' },
      headers: json,
    });
    expect(
      requestFor('post_message', {
        channel: 'C0123ABCD',
        text: 'in thread',
        thread_ts: '1712345678.123456',
      }),
    ).toEqual({
      method: 'POST',
      path: '/api/chat.postMessage',
      body: { channel: 'C0123ABCD', text: 'in thread', thread_ts: '1712345678.123456' },
      headers: json,
    });
  });

  it.each([
    ['a missing text', { channel: 'C0123ABCD' }],
    ['an empty text', { channel: 'C0123ABCD', text: '' }],
    ['a text over 40,000 characters', { channel: 'C0123ABCD', text: 'x'.repeat(40_001) }],
    ['a bare channel name', { channel: 'general', text: 'hi' }],
    ['a channel with a path in it', { channel: 'C01/../x', text: 'hi' }],
    ['a malformed thread ts', { channel: 'C0123ABCD', text: 'hi', thread_ts: 'yesterday' }],
    ['an unknown field', { channel: 'C0123ABCD', text: 'hi', as_user: true }],
  ])('refuses to post with %s', (_case, input) => {
    expect(accepts('post_message', input)).toBe(false);
  });

  it('updates and deletes by channel id and ts', () => {
    const message = { channel: 'C0123ABCD', ts: '1712345678.123456' };
    expect(requestFor('update_message', { ...message, text: 'edited' })).toEqual({
      method: 'POST',
      path: '/api/chat.update',
      body: { ...message, text: 'edited' },
      headers: json,
    });
    expect(requestFor('delete_message', message)).toEqual({
      method: 'POST',
      path: '/api/chat.delete',
      body: message,
      headers: json,
    });
    expect(accepts('delete_message', { channel: '#general', ts: message.ts })).toBe(false);
  });

  it('reacts with an emoji name given without colons', () => {
    const target = { channel: 'C0123ABCD', timestamp: '1712345678.123456' };
    expect(requestFor('add_reaction', { ...target, name: 'thumbsup' })).toEqual({
      method: 'POST',
      path: '/api/reactions.add',
      body: { ...target, name: 'thumbsup' },
      headers: json,
    });
    expect(accepts('add_reaction', { ...target, name: ':thumbsup:' })).toBe(false);
  });

  it('keeps Slack’s answers as they come, so {ok: false, error} reaches the caller', () => {
    expect(listActions('slack').every((a) => a.result === undefined)).toBe(true);
  });

  it('grades reads as read, posting as write and deleting as destructive', () => {
    const scopes = Object.fromEntries(listActions('slack').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      list_channels: 'read',
      get_channel_history: 'read',
      get_thread_replies: 'read',
      post_message: 'write',
      update_message: 'write',
      delete_message: 'destructive',
      add_reaction: 'write',
    });
  });

  it('asks for bot scopes, comma-separated, and grades them', () => {
    const app = findApp('slack');
    if (!app) throw new Error('no slack app');
    expect(app.oauth.scopeSeparator).toBe(',');
    expect(app.oauth.revocationPath).toBeUndefined();
    expect(gradeScopes(app, app.oauth.defaultScopes)).toEqual(['read', 'write']);
    expect(gradeScopes(app, ['channels:read', 'channels:history'])).toEqual(['read']);
    expect(gradeScopes(app, ['chat:write'])).toEqual(['write']);
  });
});

describe('slack failures inside a 200', () => {
  const slack = findApp('slack');
  it('are recognised by their ok: false', () => {
    expect(slack?.reportsFailure?.({ ok: false, error: 'channel_not_found' })).toBe(true);
    expect(slack?.reportsFailure?.({ ok: true, channel: 'C0123' })).toBe(false);
    expect(slack?.reportsFailure?.('not json')).toBe(false);
  });
});

describe('the account behind a slack connection', () => {
  it('is the installing user of the oauth.v2.access answer', () => {
    const identity = findApp('slack')?.accountIdentity;
    if (identity?.from !== 'token_response') throw new Error('slack names it in the token answer');
    // From Slack's oauth.v2.access example.
    const answer = {
      ok: true,
      access_token: 'xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy',
      token_type: 'bot',
      bot_user_id: 'U0KRQLJ9H',
      team: { name: 'Slack Softball Team', id: 'T9TK3CUKW' },
      authed_user: { id: 'U1234', scope: 'chat:write', token_type: 'user' },
    };
    expect(identityAt(answer, identity.fields)).toBe('U1234');
  });
});
