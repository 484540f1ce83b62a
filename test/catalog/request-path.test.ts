import { describe, expect, it } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { findAction } from '../../workflows/catalog/index.js';
import { unsafePath } from '../../workflows/catalog/request-path.js';
import { outboundRequest } from '../../workflows/outbound-request.js';

function action(id: string) {
  const found = findAction(id);
  if (!found) throw new Error(`no action ${id}`);
  return found;
}

/** The issues an input gets, as `[path, message]`. */
function issues(id: string, input: unknown): [string, string][] {
  const result = action(id).input.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) => [issue.path.join('.'), issue.message]);
}

describe('the path guard of every action', () => {
  it.each([
    ['acme.get_task', { id: '..' }, 'id'],
    ['acme.get_task', { id: '.' }, 'id'],
    ['acme.update_task', { id: '..', status: 'done' }, 'id'],
    ['acme.delete_task', { id: '..' }, 'id'],
    ['github.get_issue', { owner: 'octo', repo: '..', issue_number: 1 }, 'repo'],
    ['github.update_issue', { owner: 'octo', repo: '.', issue_number: 1, title: 't' }, 'repo'],
    ['google-calendar.get_event', { calendarId: '..', eventId: 'e1' }, 'calendarId'],
    ['google-calendar.update_event', { eventId: '..', summary: 's' }, 'eventId'],
    ['google-calendar.delete_event', { calendarId: '.', eventId: 'e1' }, 'calendarId'],
  ])('refuses %s with %j, naming %s', (id, input, field) => {
    expect(issues(id, input)).toEqual([[field, expect.stringMatching(/"\." or "\.\."/)]]);
  });

  it('accepts ids that only look like dots once encoded', () => {
    for (const id of ['...', '.a', 'a.', '%2e', '..%2f', 'a/..', '\\..']) {
      expect([id, issues('acme.get_task', { id })]).toEqual([id, []]);
    }
    const built = action('acme.get_task').request({ id: 'a/..' });
    expect(built.path).toBe('/tasks/a%2F..');
  });

  it('reports field errors first, and checks the path of an otherwise valid input', () => {
    expect(issues('acme.update_task', { id: '..', title: '' }).map(([path]) => path)).toEqual([
      'title',
    ]);
    expect(issues('acme.update_task', { id: 't_1', title: 'ok' })).toEqual([]);
  });

  it.each([
    ['/tasks/..', 'must not be "." or ".."'],
    ['/tasks/.', 'must not be "." or ".."'],
    ['/tasks/%2e%2E', 'must not be "." or ".."'],
    ['/tasks/.%2e/x', 'must not be "." or ".."'],
    ['/tasks/', 'must not be empty'],
    ['/tasks//x', 'must not be empty'],
    ['/tasks/a?b', 'must not contain "?", "#" or "\\"'],
    ['/tasks/a#b', 'must not contain "?", "#" or "\\"'],
    ['/tasks/a\\b', 'must not contain "?", "#" or "\\"'],
    ['tasks', 'must start with "/"'],
  ])('finds %s unsafe', (path, problem) => {
    expect(unsafePath(path)?.problem).toBe(problem);
  });

  it.each(['/tasks', '/tasks/...', '/tasks/a%2F..', '/tasks/%252e', '/v1/pages/a.b'])(
    'finds %s safe',
    (path) => {
      expect(unsafePath(path)).toBeNull();
    },
  );

  it('never builds a request for an unsafe path, whatever reached the worker', () => {
    const forged = () =>
      outboundRequest({
        kind: 'action',
        action: 'acme.delete_task',
        app: 'acme',
        scope: 'destructive',
        input: { id: '..' },
      });
    expect(forged).toThrow(ApplicationFailure);
    expect(forged).toThrow(/UnsafeRequestPath|must not be "\." or "\.\."/);
    try {
      forged();
    } catch (error) {
      expect((error as ApplicationFailure).nonRetryable).toBe(true);
    }
  });
});
