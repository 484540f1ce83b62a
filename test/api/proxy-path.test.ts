import { describe, expect, it } from '@jest/globals';
import { canonicalProxyPath } from '../../api/calls/proxy-path.js';

describe('the canonical path of a proxy call', () => {
  it.each([
    ['tasks', 'tasks'],
    ['', ''],
    ['TASKS', 'TASKS'],
    ['Tasks/T_1', 'Tasks/T_1'],
    // Escapes of letters, digits and `-._~` name the same resource as the character itself.
    ['%74asks', 'tasks'],
    ['%74%61%73%6b%73', 'tasks'],
    ['%54ASKS', 'TASKS'],
    ['tas%6Bs', 'tasks'],
    ['a%7Eb%2D%5f%2e%30', 'a~b-_.0'],
    ['tasks%2e', 'tasks.'],
    ['tasks/...', 'tasks/...'],
    // Other escapes stay: they are data, not structure. Their hex is upper-cased.
    ['tasks/t%3fx', 'tasks/t%3Fx'],
    ['%2574asks', '%2574asks'],
    ['tasks/a%20b', 'tasks/a%20b'],
    ['ta%c5%bfks', 'ta%C5%BFks'],
    ['tasks;x', 'tasks;x'],
    ["a:b@c!$&'()*+,;=", "a:b@c!$&'()*+,;="],
    // Characters a URL parser would escape on the way are escaped here, so what policy reads is
    // byte for byte what the app receives.
    ['a{b}"<>`', 'a%7Bb%7D%22%3C%3E%60'],
    ['caf\u00e9', 'caf%C3%A9'],
    // Runs of slashes are one slash; a trailing slash stays (some apps tell `/tasks/` apart).
    ['/tasks', 'tasks'],
    ['//tasks', 'tasks'],
    ['tasks//', 'tasks/'],
    ['tasks//x', 'tasks/x'],
    ['tasks/', 'tasks/'],
    ['/', ''],
  ])('reads %j as %j', (raw, canonical) => {
    expect(canonicalProxyPath(raw)).toEqual({ path: canonical });
  });

  it.each([
    ['tasks%2Fx', /encoded slash/],
    ['%2ftasks', /encoded slash/],
    ['tasks/..%2Fme', /encoded slash/],
    ['tasks\\..\\me', /backslash/],
    ['%5Ctasks', /backslash/],
    ['tasks%5c', /backslash/],
    ['tasks%00', /control character/],
    ['tasks%0a', /control character/],
    ['tasks%1F', /control character/],
    ['tasks%7f', /control character/],
    ['tasks%zz', /malformed percent-encoding/],
    ['tasks%', /malformed percent-encoding/],
    ['tasks%4', /malformed percent-encoding/],
    ['%C0%AFtasks', /UTF-8/],
    ['tasks%E2%82', /UTF-8/],
    ['tasks%FF', /UTF-8/],
    ['tasks/../me', /"\." or "\.\."/],
    ['tasks/%2E%2e/me', /"\." or "\.\."/],
    ['tasks/.%2e/me', /"\." or "\.\."/],
    ['./me', /"\." or "\.\."/],
    ['%2e/tasks', /"\." or "\.\."/],
    ['tasks/.', /"\." or "\.\."/],
    ['tasks/..', /"\." or "\.\."/],
    ['tasks//..', /"\." or "\.\."/],
    ['me#x', /"#"/],
    ['tasks/a%23b', null],
  ])('refuses %j', (raw, problem) => {
    const read = canonicalProxyPath(raw);
    if (problem === null) {
      // An escaped `#` is data, kept escaped.
      expect(read).toEqual({ path: raw });
      return;
    }
    expect(read).toEqual({ problem: expect.stringMatching(problem) as unknown as string });
  });
});
