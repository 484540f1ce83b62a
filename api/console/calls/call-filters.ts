import { z } from 'zod';
import type { AuditFilter } from '../../../activities/db/audit-events.js';
import { decodeCursor } from '../../http/id-cursor.js';
import { externalUserId } from '../../http/external-user-id.js';

export const DECISIONS = ['allowed', 'blocked', 'denied', 'failed'] as const;

/** One page of the list: as many as the API's default page. */
export const CALLS_PAGE_SIZE = 50;

// Control characters (Unicode Cc), as the API refuses them in ids.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const noControl = /^[^\u0000-\u001f\u007f-\u009f]*$/;

/** A form's empty field is no filter: browsers send every field, filled or not. */
const blankIsAbsent = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const text = (max: number) =>
  z.preprocess(
    blankIsAbsent,
    z.string().trim().max(max).regex(noControl, 'must not contain control characters').optional(),
  );

/**
 * A time as `<input type="datetime-local">` sends it (`2026-03-02T09:00`, seconds optional), read
 * as UTC since the page says so and runs no script to learn the browser's zone; or a full ISO
 * time with its own zone, as a link may carry.
 */
const time = z.preprocess(
  blankIsAbsent,
  z
    .string()
    .max(40)
    .regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/,
      'must be a date and time such as 2026-03-02T09:00',
    )
    .transform((value, ctx) => {
      const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}Z`;
      const at = new Date(zoned);
      if (Number.isNaN(at.getTime())) {
        ctx.addIssue({ code: 'custom', message: 'is not a real date and time' });
        return z.NEVER;
      }
      return at;
    })
    .optional(),
);

/** The list's query: what the filter form and the paging links send. Unknown fields are ignored. */
export const callsQuery = z.object({
  agent: text(255),
  user: z.preprocess(blankIsAbsent, externalUserId.optional()),
  action: text(200),
  decision: z.preprocess(blankIsAbsent, z.enum(DECISIONS).optional()),
  since: time,
  until: time,
  cursor: z.preprocess(blankIsAbsent, z.string().max(4096).optional()),
});

export type CallsQuery = z.infer<typeof callsQuery>;

/** The filter form's fields as sent, to show them back (also when they did not parse). */
export type CallsForm = Partial<
  Record<'agent' | 'user' | 'action' | 'decision' | 'since' | 'until', string>
>;

export function formFieldsOf(query: Record<string, unknown>): CallsForm {
  const form: CallsForm = {};
  for (const name of ['agent', 'user', 'action', 'decision', 'since', 'until'] as const) {
    const value = query[name];
    if (typeof value === 'string' && value !== '') form[name] = value.slice(0, 300);
  }
  return form;
}

export type ReadCalls =
  { ok: true; query: CallsQuery; filter: AuditFilter } | { ok: false; problems: string[] };

/** The query as the audit list's filter, or what is wrong with it, field by field. */
export function readCallsQuery(raw: Record<string, unknown>): ReadCalls {
  const parsed = callsQuery.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map(
        (issue) => `${issue.path.join('.') || 'query'}: ${issue.message}`,
      ),
    };
  }
  const query = parsed.data;
  let before: string | undefined;
  if (query.cursor !== undefined) {
    try {
      before = decodeCursor(query.cursor);
    } catch {
      return { ok: false, problems: ['cursor: not a page of this list (start from the first)'] };
    }
  }
  if (query.since && query.until && query.since >= query.until) {
    return { ok: false, problems: ['until: must be after since'] };
  }
  return {
    ok: true,
    query,
    filter: {
      ...(query.agent === undefined ? {} : { agent: query.agent }),
      ...(query.user === undefined ? {} : { user: query.user }),
      ...(query.action === undefined ? {} : { action: query.action }),
      ...(query.decision === undefined ? {} : { decision: query.decision }),
      ...(query.since === undefined ? {} : { since: query.since }),
      ...(query.until === undefined ? {} : { until: query.until }),
      ...(before === undefined ? {} : { before }),
      limit: CALLS_PAGE_SIZE,
    },
  };
}

/** The list's address with these filters (and a page), for links that keep them. */
export function callsHref(base: string, form: CallsForm, cursor?: string): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) if (value) params.set(name, value);
  if (cursor !== undefined) params.set('cursor', cursor);
  const query = params.toString();
  return `${base}/calls${query ? `?${query}` : ''}`;
}
