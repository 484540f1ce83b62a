import { describe, expect, it } from '@jest/globals';
import { findAction, findApp, gradeScopes, listActions } from '../../workflows/catalog/index.js';
import type { ActionDefinition } from '../../workflows/catalog/index.js';

function action(name: string): ActionDefinition {
  const found = findAction(`google-calendar.${name}`);
  if (!found) throw new Error(`no action google-calendar.${name}`);
  return found;
}
const requestFor = (name: string, input: unknown) => {
  const definition = action(name);
  return definition.request(definition.input.parse(input));
};
const accepts = (name: string, input: unknown) => action(name).input.safeParse(input).success;

const start = { dateTime: '2026-05-01T09:00:00+02:00', timeZone: 'Europe/Paris' };
const end = { dateTime: '2026-05-01T10:00:00+02:00', timeZone: 'Europe/Paris' };

describe('google-calendar actions', () => {
  it('lists events of the primary calendar by default', () => {
    expect(
      requestFor('list_events', {
        timeMin: '2026-05-01T00:00:00Z',
        timeMax: '2026-05-08T00:00:00+02:00',
        singleEvents: true,
        orderBy: 'startTime',
      }),
    ).toEqual({
      method: 'GET',
      path: '/calendar/v3/calendars/primary/events',
      query: {
        timeMin: '2026-05-01T00:00:00Z',
        timeMax: '2026-05-08T00:00:00+02:00',
        singleEvents: true,
        orderBy: 'startTime',
      },
    });
  });

  it('encodes calendar and event ids', () => {
    expect(requestFor('list_events', { calendarId: 'a/b c' }).path).toBe(
      '/calendar/v3/calendars/a%2Fb%20c/events',
    );
    expect(
      requestFor('get_event', {
        calendarId: 'en.usa#holiday@group.v.calendar.google.com',
        eventId: 'abc123_20260501T090000Z',
      }),
    ).toEqual({
      method: 'GET',
      path: '/calendar/v3/calendars/en.usa%23holiday%40group.v.calendar.google.com/events/abc123_20260501T090000Z',
    });
    expect(accepts('get_event', { calendarId: '..', eventId: 'abc123' })).toBe(false);
    expect(accepts('get_event', { eventId: 'a/b c' })).toBe(false);
  });

  it.each([
    ['a date without time', { timeMin: '2026-05-01' }],
    ['a time without offset', { timeMin: '2026-05-01T09:00:00' }],
    ['not a time at all', { timeMax: 'next monday' }],
    [
      'a window that ends before it starts',
      { timeMin: '2026-05-02T00:00:00Z', timeMax: '2026-05-01T00:00:00Z' },
    ],
    ['startTime order without single events', { orderBy: 'startTime' }],
    ['too many results', { maxResults: 2501 }],
    ['an unknown field', { calendar: 'primary' }],
  ])('refuses to list events with %s', (_case, input) => {
    expect(accepts('list_events', input)).toBe(false);
  });

  it('creates an event with attendees, telling them when asked', () => {
    expect(
      requestFor('create_event', {
        summary: 'Planning',
        start,
        end,
        attendees: [{ email: 'ana@example.com' }],
        sendUpdates: 'all',
      }),
    ).toEqual({
      method: 'POST',
      path: '/calendar/v3/calendars/primary/events',
      query: { sendUpdates: 'all' },
      body: { summary: 'Planning', start, end, attendees: [{ email: 'ana@example.com' }] },
    });
    expect(
      accepts('create_event', { start: { date: '2026-05-01' }, end: { date: '2026-05-02' } }),
    ).toBe(true);
  });

  it.each([
    ['no end', { start }],
    ['an end before the start', { start: end, end: start }],
    ['a malformed all-day date', { start: { date: '01/05/2026' }, end: { date: '2026-05-02' } }],
    ['both a date and a time', { start: { ...start, date: '2026-05-01' }, end }],
    ['an attendee that is not an email', { start, end, attendees: [{ email: 'ana' }] }],
  ])('refuses to create an event with %s', (_case, input) => {
    expect(accepts('create_event', input)).toBe(false);
  });

  it('patches only the fields given, and refuses an update that changes nothing', () => {
    expect(requestFor('update_event', { eventId: 'evt123', summary: 'Moved', start, end })).toEqual(
      {
        method: 'PATCH',
        path: '/calendar/v3/calendars/primary/events/evt123',
        query: {},
        body: { summary: 'Moved', start, end },
      },
    );
    expect(accepts('update_event', { eventId: 'evt123', sendUpdates: 'all' })).toBe(false);
  });

  it('deletes an event as a destructive call and reports it deleted', () => {
    const remove = action('delete_event');
    expect(remove.scope).toBe('destructive');
    expect(requestFor('delete_event', { eventId: 'evt123', sendUpdates: 'none' })).toEqual({
      method: 'DELETE',
      path: '/calendar/v3/calendars/primary/events/evt123',
      query: { sendUpdates: 'none' },
    });
    expect(remove.result?.({ status: 204, headers: {}, body: null })).toEqual({ deleted: true });
  });

  it('grades reads as read and changes as write', () => {
    const scopes = Object.fromEntries(listActions('google-calendar').map((a) => [a.name, a.scope]));
    expect(scopes).toEqual({
      list_calendars: 'read',
      list_events: 'read',
      get_event: 'read',
      create_event: 'write',
      update_event: 'write',
      delete_event: 'destructive',
    });
  });

  it('asks Google for offline access with the narrow calendar scopes', () => {
    const app = findApp('google-calendar');
    if (!app) throw new Error('no google-calendar app');
    expect(app.oauth.extraAuthorizationParams).toEqual({
      access_type: 'offline',
      prompt: 'consent',
    });
    expect(app.oauth.pkce).toBe(true);
    expect(gradeScopes(app, app.oauth.defaultScopes)).toEqual(['read', 'write']);
    expect(gradeScopes(app, ['https://www.googleapis.com/auth/calendar.readonly'])).toEqual([
      'read',
    ]);
  });
});

describe('the account behind a google-calendar connection', () => {
  it('is not learned: Google’s stable id needs OpenID, and e-mail addresses change', () => {
    expect(findApp('google-calendar')?.accountIdentity).toBeUndefined();
  });
});
