import { describe, expect, it } from '@jest/globals';
import { formatTerminalLine, terminalLogStream } from '../../infra/dev/terminal-log.js';

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({
    level: 'warn',
    time: '2026-01-02T03:04:05.000Z',
    pid: 1,
    hostname: 'vm',
    name: 'gatehouse',
    ...fields,
  });

describe('the dev terminal log', () => {
  it('shows a record as one readable line: time, level, component, message, details', () => {
    const line = formatTerminalLine(
      record({ component: 'api', msg: 'upstream slow', app: 'acme', ms: 2100 }),
    );
    expect(line).toMatch(/^\d\d:\d\d:\d\d WARN {2}api: upstream slow \{"app":"acme","ms":2100\}$/);
  });

  it('names an error by type and message, and leaves its stack to the file', () => {
    const line = formatTerminalLine(
      record({
        level: 'error',
        msg: 'stop failed',
        err: { type: 'TypeError', message: 'boom', stack: 'TypeError: boom\n    at x' },
      }),
    );
    expect(line).toMatch(/ ERROR stop failed \(TypeError: boom\)$/);
  });

  it('cuts long details, pointing at the file', () => {
    const line = formatTerminalLine(record({ msg: 'big', body: 'x'.repeat(1000) })) ?? '';
    expect(line.length).toBeLessThan(400);
    expect(line).toContain('… (full record in the log file)');
  });

  it("leaves oidc-provider's runtime notice to the file (README: Decisions recorded)", () => {
    const notice = record({
      component: 'demo-app',
      msg: 'oidc-provider WARNING: Unsupported runtime. Use Node.js v22.x LTS, or a later LTS release.',
    });
    expect(formatTerminalLine(notice)).toBeNull();
  });

  it('writes each record of a chunk on its own line, and passes non-JSON through', () => {
    let written = '';
    const out = {
      write: (text: string) => {
        written += text;
        return true;
      },
    } as unknown as NodeJS.WritableStream;
    terminalLogStream(out).write(`${record({ msg: 'one' })}\nnot json\n`);
    expect(written.split('\n')).toEqual([expect.stringMatching(/ WARN {2}one$/), 'not json', '']);
  });
});
