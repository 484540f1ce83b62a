import * as oidc from 'openid-client';
import type { OidcSettings } from '../../infra/config.js';
import { ServiceUnavailableError } from '../errors.js';

/** How long one request to the identity provider (discovery, the code exchange) may take. */
const PROVIDER_TIMEOUT_SECONDS = 5;
/** A failed discovery is tried again on the next sign-in after this long, not on every one. */
const RETRY_AFTER_FAILURE_MS = 5_000;

/**
 * The identity provider as openid-client knows it: discovered on first use (the API starts even
 * while the provider is down) and kept; a failed discovery answers 503 for a few seconds, then
 * is tried again. Every request to the provider is bounded, so a stalled provider costs a sign-in
 * at most a few seconds and never the API's other requests.
 */
export interface IdentityProvider {
  readonly settings: OidcSettings;
  configuration(): Promise<oidc.Configuration>;
}

/** `onFailure`: told why a discovery failed (the page only says the provider did not answer). */
export function identityProviderOf(
  settings: OidcSettings,
  onFailure: (error: unknown) => void,
): IdentityProvider {
  let discovered: Promise<oidc.Configuration> | null = null;
  let failedAt = 0;
  const discover = async (): Promise<oidc.Configuration> => {
    const issuer = new URL(settings.issuer);
    const insecure = issuer.protocol === 'http:';
    const configuration = await oidc.discovery(
      issuer,
      settings.clientId,
      undefined,
      oidc.ClientSecretBasic(settings.clientSecret),
      {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        // Plain http is accepted for loopback providers only (config refuses it elsewhere for
        // the service's own URL; a development provider runs on loopback).
        // eslint-disable-next-line @typescript-eslint/no-deprecated
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      },
    );
    configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
    return configuration;
  };
  return {
    settings,
    configuration() {
      if (discovered === null && Date.now() - failedAt >= RETRY_AFTER_FAILURE_MS) {
        discovered = discover().catch((error: unknown) => {
          discovered = null;
          failedAt = Date.now();
          onFailure(error);
          throw new ServiceUnavailableError(
            'The identity provider did not answer; try again shortly.',
            {},
            5,
          );
        });
      }
      if (discovered === null) {
        return Promise.reject(
          new ServiceUnavailableError(
            'The identity provider did not answer; try again shortly.',
            {},
            5,
          ),
        );
      }
      return discovered;
    },
  };
}
