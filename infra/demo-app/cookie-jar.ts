/** Just enough of a browser's cookie handling to walk OAuth redirects with fetch. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(res: Response): void {
    for (const cookie of res.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const cleared =
        value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie) || /max-age=0(;|$)/i.test(cookie);
      if (cleared) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  /** Names of the cookies held, e.g. to find the one a server set. */
  names(): string[] {
    return [...this.#cookies.keys()];
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  set(name: string, value: string): void {
    this.#cookies.set(name, value);
  }

  delete(name: string): void {
    this.#cookies.delete(name);
  }
}
