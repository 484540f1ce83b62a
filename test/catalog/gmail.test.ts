import { describe, expect, it } from '@jest/globals';
import { Buffer } from 'node:buffer';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`gmail.${name}`);
  if (!found) throw new Error(`no action gmail.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;

/** The message behind a `raw` field: its header lines (unfolded) and its decoded body. */
function decodeRaw(raw: string) {
  expect(raw).toMatch(/^[A-Za-z0-9_-]+$/);
  const message = Buffer.from(raw, 'base64url').toString('utf8');
  const split = message.indexOf('\r\n\r\n');
  const head = message.slice(0, split);
  // Every line ends in CRLF, and none is longer than RFC 5322's 998 characters.
  expect(message.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  for (const line of message.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const body = Buffer.from(message.slice(split + 4).replace(/\r\n/g, ''), 'base64').toString();
  return { head, headers, body };
}

/** RFC 2047 B-encoded words back to text; whitespace between adjacent words is dropped. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=/g, (_word, data: string) =>
      Buffer.from(data, 'base64').toString('utf8'),
    );
}

const rawOf = (request: { body?: unknown }): string => {
  const body = request.body as { raw?: string; message?: { raw?: string } };
  const raw = body.raw ?? body.message?.raw;
  if (raw === undefined) throw new Error('no raw message');
  return raw;
};

describe('gmail actions', () => {
  it('sends an RFC 822 message built from to, subject and body', () => {
    const request = requestFor('send_message', {
      to: ['ana@example.com', 'bo@example.org'],
      cc: ['cy@example.net'],
      subject: 'Weekly report',
      body: 'Hello,\nall good.\n',
    });
    expect(request).toMatchObject({ method: 'POST', path: '/gmail/v1/users/me/messages/send' });
    const { headers, body } = decodeRaw(rawOf(request));
    expect(Object.fromEntries(headers)).toEqual({
      To: 'ana@example.com, bo@example.org',
      Cc: 'cy@example.net',
      Subject: 'Weekly report',
      'MIME-Version': '1.0',
      'Content-Type': 'text/plain; charset="UTF-8"',
      'Content-Transfer-Encoding': 'base64',
    });
    expect(body).toBe('Hello,\r\nall good.\r\n');
  });

  it('encodes a non-ASCII subject as UTF-8 encoded words no longer than 75 characters', () => {
    const subject =
      'Réunion très importante 🚀 — ordre du jour, 日本語の件名も含めて、長いテキスト';
    const { head, headers, body } = decodeRaw(
      rawOf(requestFor('send_message', { to: ['ana@example.com'], subject, body: 'Ça va ? 👍' })),
    );
    const encoded = headers.get('Subject') ?? '';
    expect(encoded).not.toBe(subject);
    expect(decodeWords(encoded)).toBe(subject);
    const words = head.match(/=\?UTF-8\?B\?[^?]*\?=/g) ?? [];
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) expect(word.length).toBeLessThanOrEqual(75);
    expect(head).toMatch(/^[\x20-\x7e\r\n]*$/);
    expect(body).toBe('Ça va ? 👍');
  });

  it('threads a reply and saves drafts the same way', () => {
    const reply = {
      to: ['ana@example.com'],
      subject: 'Re: plan',
      body: 'Yes.',
      threadId: '18c2f0a1b2c3d4e5',
      inReplyTo: '<CAF=abc@mail.gmail.com>',
    };
    const sent = requestFor('send_message', reply);
    expect(sent.body).toMatchObject({ threadId: '18c2f0a1b2c3d4e5' });
    const { headers } = decodeRaw(rawOf(sent));
    expect(headers.get('In-Reply-To')).toBe('<CAF=abc@mail.gmail.com>');
    expect(headers.get('References')).toBe('<CAF=abc@mail.gmail.com>');

    const draft = requestFor('create_draft', reply);
    expect(draft).toMatchObject({
      method: 'POST',
      path: '/gmail/v1/users/me/drafts',
      body: { message: { threadId: '18c2f0a1b2c3d4e5' } },
    });
    expect(decodeRaw(rawOf(draft)).headers.get('Subject')).toBe('Re: plan');
  });

  it.each([
    ['no recipient', { to: [], subject: 's', body: 'b' }],
    ['a recipient that is not an address', { to: ['ana'], subject: 's', body: 'b' }],
    [
      'a header smuggled into an address',
      { to: ['a@b.co\r\nBcc: x@y.co'], subject: 's', body: 'b' },
    ],
    [
      'a header smuggled into the subject',
      { to: ['a@b.co'], subject: 's\r\nBcc: x@y.co', body: 'b' },
    ],
    ['a missing body', { to: ['a@b.co'], subject: 's' }],
    ['a body of the wrong type', { to: ['a@b.co'], subject: 's', body: 42 }],
    ['an unknown field', { to: ['a@b.co'], subject: 's', body: 'b', from: 'x@y.co' }],
    ['a malformed Message-ID', { to: ['a@b.co'], subject: 's', body: 'b', inReplyTo: 'abc' }],
  ])('refuses to send with %s', (_case, input) => {
    expect(accepts('send_message', input)).toBe(false);
  });

  it('lists and reads messages', () => {
    expect(
      requestFor('list_messages', { q: 'is:unread from:ana@example.com', maxResults: 20 }),
    ).toEqual({
      method: 'GET',
      path: '/gmail/v1/users/me/messages',
      query: { q: 'is:unread from:ana@example.com', maxResults: 20 },
    });
    expect(accepts('list_messages', { maxResults: 501 })).toBe(false);
    expect(accepts('list_messages', { maxResults: 0 })).toBe(false);
    expect(requestFor('get_message', { id: '18c2f0a1b2c3d4e5', format: 'metadata' })).toEqual({
      method: 'GET',
      path: '/gmail/v1/users/me/messages/18c2f0a1b2c3d4e5',
      query: { format: 'metadata' },
    });
  });

  it('encodes message ids in paths, and accepts only id-shaped ones', () => {
    expect(action('trash_message').request({ id: 'a/b c' })).toEqual({
      method: 'POST',
      path: '/gmail/v1/users/me/messages/a%2Fb%20c/trash',
    });
    expect(accepts('trash_message', { id: 'a/b c' })).toBe(false);
    expect(accepts('trash_message', { id: '..' })).toBe(false);
  });

  it('changes labels, and refuses a change of none', () => {
    expect(
      requestFor('modify_labels', { id: '18c2f0a1b2c3d4e5', removeLabelIds: ['UNREAD'] }),
    ).toEqual({
      method: 'POST',
      path: '/gmail/v1/users/me/messages/18c2f0a1b2c3d4e5/modify',
      body: { removeLabelIds: ['UNREAD'] },
    });
    expect(accepts('modify_labels', { id: '18c2f0a1b2c3d4e5', addLabelIds: [] })).toBe(false);
  });

  it('grades reads as read, sending as write and trashing as destructive', () => {
    const scopes = Object.fromEntries(listActions('gmail').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      list_messages: 'read',
      get_message: 'read',
      send_message: 'write',
      create_draft: 'write',
      modify_labels: 'write',
      trash_message: 'destructive',
      list_labels: 'read',
    });
  });

  it('asks for gmail.modify, which grades read and write', () => {
    const app = findApp('gmail');
    if (!app) throw new Error('no gmail app');
    expect(app.oauth.defaultScopes).toEqual(['https://www.googleapis.com/auth/gmail.modify']);
    expect(gradeScopes(app, app.oauth.defaultScopes)).toEqual(['read', 'write']);
    expect(gradeScopes(app, ['https://www.googleapis.com/auth/gmail.readonly'])).toEqual(['read']);
    expect(gradeScopes(app, ['https://www.googleapis.com/auth/gmail.send'])).toEqual(['write']);
  });
});

describe('the account behind a gmail connection', () => {
  it('is not learned: Google’s stable id needs OpenID, and e-mail addresses change', () => {
    expect(findApp('gmail')?.accountIdentity).toBeUndefined();
  });
});
