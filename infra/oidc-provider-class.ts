import type Provider from 'oidc-provider';
import type { Logger } from 'pino';

let providerClass: Promise<typeof Provider> | undefined;

/**
 * oidc-provider's class, imported once for the process. oidc-provider 9 prints "Unsupported
 * runtime" on import under Node 20 (it targets Node 22+) though it works: that one notice goes to
 * the first caller's logger instead of the terminal. The demo app and the dev sign-in provider
 * share this one import, so neither can restore the other's console.warn mid-import.
 */
export function loadProviderClass(logger: Logger | undefined): Promise<typeof Provider> {
  providerClass ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      const [first] = args;
      if (typeof first === 'string' && first.includes('Unsupported runtime')) {
        logger?.warn(first);
        return;
      }
      warn(...args);
    };
    try {
      return (await import('oidc-provider')).default;
    } finally {
      console.warn = warn;
    }
  })();
  return providerClass;
}
