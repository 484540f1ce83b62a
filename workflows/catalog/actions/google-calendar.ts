import { z } from 'zod';
import { defineAction } from '../types.js';

const calendarId = z
  .string()
  .min(1)
  .max(1024)
  .default('primary')
  .meta({ description: "A calendar id from list_calendars; defaults to the user's primary one" });
const eventId = z
  .string()
  .regex(/^[A-Za-z0-9_@.-]{1,1024}$/)
  .meta({ description: 'The event id from list_events' });
const dateTime = z.iso.datetime({ offset: true });
const eventTime = z.union([
  z.strictObject({
    dateTime: dateTime.meta({
      description: 'RFC 3339 with offset, e.g. 2026-05-01T09:00:00+02:00',
    }),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .meta({ description: 'IANA zone, e.g. Europe/Paris; needed for recurring events' }),
  }),
  z.strictObject({
    date: z.iso.date().meta({ description: 'An all-day date, YYYY-MM-DD' }),
  }),
]);
const sendUpdates = z
  .enum(['all', 'externalOnly', 'none'])
  .optional()
  .meta({ description: 'Whom Google emails about the change; none by default' });
const eventFields = {
  summary: z.string().max(1024).optional().meta({ description: 'The event title' }),
  description: z.string().max(8192).optional(),
  location: z.string().max(1024).optional(),
  attendees: z
    .array(z.strictObject({ email: z.email(), optional: z.boolean().optional() }))
    .max(100)
    .optional(),
};

type EventTime = z.infer<typeof eventTime>;
/** Whether anything besides which event and whom to tell was given. */
const changesAny = (input: object) =>
  Object.entries(input).some(
    ([key, value]) =>
      !['calendarId', 'eventId', 'sendUpdates'].includes(key) && value !== undefined,
  );
const instant = (time: EventTime) => Date.parse('date' in time ? time.date : time.dateTime);
/** An event may not end before it starts (equal is allowed, as Google allows it). */
const inOrder = (event: { start?: EventTime; end?: EventTime }) =>
  event.start === undefined ||
  event.end === undefined ||
  instant(event.start) <= instant(event.end);

const eventsPath = (calendar: string) =>
  `/calendar/v3/calendars/${encodeURIComponent(calendar)}/events`;
const eventPath = (calendar: string, event: string) =>
  `${eventsPath(calendar)}/${encodeURIComponent(event)}`;

/** Google Calendar API v3: the user's calendars and their events. */
export const googleCalendarActions = [
  defineAction({
    app: 'google-calendar',
    name: 'list_calendars',
    scope: 'read',
    description: "List the calendars on the user's calendar list, with their ids and access roles.",
    input: z.strictObject({
      maxResults: z.number().int().min(1).max(250).optional(),
      pageToken: z.string().min(1).max(1024).optional(),
      minAccessRole: z.enum(['freeBusyReader', 'reader', 'writer', 'owner']).optional(),
    }),
    request: (query) => ({ method: 'GET', path: '/calendar/v3/users/me/calendarList', query }),
  }),
  defineAction({
    app: 'google-calendar',
    name: 'list_events',
    scope: 'read',
    description: 'List events of a calendar, optionally in a time window or matching a text.',
    input: z
      .strictObject({
        calendarId,
        timeMin: dateTime.optional().meta({ description: 'Events ending after this (RFC 3339)' }),
        timeMax: dateTime.optional().meta({ description: 'Events starting before this' }),
        q: z.string().min(1).max(1024).optional().meta({ description: 'Free-text search' }),
        singleEvents: z
          .boolean()
          .optional()
          .meta({ description: 'Expand recurring events into their instances' }),
        orderBy: z
          .enum(['startTime', 'updated'])
          .optional()
          .meta({ description: '`startTime` needs singleEvents: true' }),
        maxResults: z.number().int().min(1).max(2500).optional(),
        pageToken: z.string().min(1).max(1024).optional(),
      })
      .refine(
        (input) => input.orderBy !== 'startTime' || input.singleEvents === true,
        'orderBy startTime needs singleEvents: true',
      )
      .refine(
        (input) =>
          !input.timeMin || !input.timeMax || Date.parse(input.timeMin) < Date.parse(input.timeMax),
        'timeMin must be before timeMax',
      ),
    request: ({ calendarId, ...query }) => ({ method: 'GET', path: eventsPath(calendarId), query }),
  }),
  defineAction({
    app: 'google-calendar',
    name: 'get_event',
    scope: 'read',
    description: 'Get one event with its time, attendees and details.',
    input: z.strictObject({ calendarId, eventId }),
    request: (input) => ({ method: 'GET', path: eventPath(input.calendarId, input.eventId) }),
  }),
  defineAction({
    app: 'google-calendar',
    name: 'create_event',
    scope: 'write',
    description: 'Create an event, timed or all-day, optionally inviting attendees.',
    input: z
      .strictObject({ calendarId, sendUpdates, start: eventTime, end: eventTime, ...eventFields })
      .refine(inOrder, 'end must not be before start'),
    request: ({ calendarId, sendUpdates, ...body }) => ({
      method: 'POST',
      path: eventsPath(calendarId),
      query: { sendUpdates },
      body,
    }),
  }),
  defineAction({
    app: 'google-calendar',
    name: 'update_event',
    scope: 'write',
    description: 'Change some fields of an event; fields not given stay as they are.',
    input: z
      .strictObject({
        calendarId,
        eventId,
        sendUpdates,
        start: eventTime.optional(),
        end: eventTime.optional(),
        ...eventFields,
      })
      .refine(changesAny, 'Nothing to change')
      .refine(inOrder, 'end must not be before start'),
    request: ({ calendarId, eventId, sendUpdates, ...body }) => ({
      method: 'PATCH',
      path: eventPath(calendarId, eventId),
      query: { sendUpdates },
      body,
    }),
  }),
  defineAction({
    app: 'google-calendar',
    name: 'delete_event',
    scope: 'destructive',
    description: 'Delete an event (cancelling it for its attendees).',
    input: z.strictObject({ calendarId, eventId, sendUpdates }),
    request: ({ calendarId, eventId, sendUpdates }) => ({
      method: 'DELETE',
      path: eventPath(calendarId, eventId),
      query: { sendUpdates },
    }),
    // Google answers 204 with no body.
    result: () => ({ deleted: true }),
  }),
];
