import { describe, expect, it } from '@jest/globals';
import { attemptCookieOptions, newBrowserBinding } from '../../api/connect/attempt-cookie.js';

const api = (publicUrl: string) => ({
  api: { host: '127.0.0.1', port: 3000, publicUrl, bodyLimitBytes: 1_000_000 },
});

describe('the cookie that binds an OAuth attempt to its browser', () => {
  it('is Secure when PUBLIC_URL is https, and only then', () => {
    expect(attemptCookieOptions(api('https://gatehouse.example.com'))).toEqual({
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: '/connect',
    });
    expect(attemptCookieOptions(api('http://127.0.0.1:3000')).secure).toBe(false);
  });

  it('is scoped to the connect pages below a PUBLIC_URL with a path', () => {
    expect(attemptCookieOptions(api('https://example.com/gatehouse/')).path).toBe(
      '/gatehouse/connect',
    );
  });

  it('is named by a fresh reference and holds a fresh 256-bit value each time', () => {
    const one = newBrowserBinding();
    const two = newBrowserBinding();
    expect(one.ref).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(one.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(two.ref).not.toBe(one.ref);
    expect(two.secret).not.toBe(one.secret);
  });
});
