import { describe, expect, it } from '@jest/globals';
import { findAction, findApp, listActions, listApps } from '../workflows/catalog/index.js';

describe('the app catalog', () => {
  it('names every action <app>.<action> after an app it knows, once', () => {
    const names = listActions().map((a) => `${a.app}.${a.name}`);
    expect(new Set(names).size).toBe(names.length);
    for (const action of listActions()) {
      expect(findApp(action.app)).toBeDefined();
      expect(action.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(['read', 'write', 'destructive']).toContain(action.scope);
      expect(action.description.length).toBeGreaterThan(5);
    }
  });

  it('grades every provider scope an app asks for by default', () => {
    for (const app of listApps()) {
      for (const scope of app.oauth.defaultScopes)
        expect(app.oauth.scopeGrades[scope]).toBeDefined();
    }
  });

  it('says in words what every scope it knows lets the product do', () => {
    for (const app of listApps()) {
      const known = [...app.oauth.defaultScopes, ...Object.keys(app.oauth.scopeGrades)];
      for (const scope of known) {
        const words = app.oauth.scopeDescriptions?.[scope];
        expect({ app: app.id, scope, words }).toEqual({
          app: app.id,
          scope,
          words: expect.stringMatching(/^[A-Z][^.]{4,90}$/),
        });
      }
    }
  });

  it('says what its destructive actions do in the words of a scope it asks for', () => {
    // The connect page lists these words: a person who allows "Create and change your tasks"
    // has also allowed deleting them, as the demo app's own consent page says.
    // Notion has no scopes at all (its consent screen lists the integration's capabilities).
    for (const app of listApps().filter((a) => a.oauth.defaultScopes.length > 0)) {
      const writeWords = app.oauth.defaultScopes
        .filter((scope) => app.oauth.scopeGrades[scope]?.includes('write'))
        .map((scope) => app.oauth.scopeDescriptions?.[scope] ?? '');
      for (const action of listActions().filter(
        (a) => a.app === app.id && a.scope === 'destructive',
      )) {
        // delete_task → delete, trash_message → trash, archive_issue → archive.
        const verb = action.name.split('_')[0] ?? '';
        const said = writeWords.some((words) => new RegExp(`\\b${verb}`, 'i').test(words));
        expect({ action: `${app.id}.${action.name}`, said, writeWords }).toEqual({
          action: `${app.id}.${action.name}`,
          said: true,
          writeWords,
        });
      }
    }
  });

  it('turns acme inputs into requests to the task API', () => {
    const update = findAction('acme.update_task');
    expect(update?.input.safeParse({ id: 't/1', status: 'done' }).success).toBe(true);
    expect(update?.request({ id: 't/1', status: 'done' })).toEqual({
      method: 'PATCH',
      path: '/tasks/t%2F1',
      body: { status: 'done' },
    });
    expect(findAction('acme.create_task')?.input.safeParse({ title: '' }).success).toBe(false);
    expect(findAction('acme.list_tasks')?.input.safeParse({ colour: 'red' }).success).toBe(false);
    expect(findAction('acme.delete_task')?.scope).toBe('destructive');
  });
});
