import { describe, expect, it } from '@jest/globals';
import { spawnService } from '../../infra/dev/service-process.js';

/**
 * A Go server that crashes on start (the Temporal dev server) prints `panic: <why>` and then a
 * stack trace longer than the lines kept for the error: the why must survive, since it says
 * whether an address was in use, which decides whether the start is tried again on another port.
 */
describe('a service that crashes with a long stack trace', () => {
  it('keeps the line that says why, ahead of its last lines', async () => {
    const script = [
      "console.log('starting');",
      "console.error('panic: listen tcp 127.0.0.1:7235: bind: address already in use');",
      "for (let i = 0; i < 60; i++) console.error('\\tgoroutine frame ' + i);",
      'process.exitCode = 2;',
    ].join('\n');
    const service = await spawnService(process.execPath, ['-e', script]);
    expect(await service.exited).toEqual({ code: 2, signal: null });
    const recent = service.recent().split('\n');
    expect(recent[0]).toBe('panic: listen tcp 127.0.0.1:7235: bind: address already in use');
    expect(recent.at(-1)).toBe('\tgoroutine frame 59');
    expect(recent).not.toContain('starting');
  });
});
