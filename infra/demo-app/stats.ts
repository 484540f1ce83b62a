export interface DemoStats {
  /** Requests that reached the token endpoint, successful or not, by grant_type. */
  tokenRequests: { authorization_code: number; refresh_token: number };
  /** Requests that reached the RFC 7009 revocation endpoint. */
  revocations: number;
  /** Requests to the resource API (/tasks, /me), including ones answered by a fault. */
  apiRequests: number;
}

export class StatsCounter {
  #stats: DemoStats = emptyStats();

  countTokenRequest(grantType: unknown): void {
    if (grantType === 'authorization_code' || grantType === 'refresh_token') {
      this.#stats.tokenRequests[grantType] += 1;
    }
  }

  countRevocation(): void {
    this.#stats.revocations += 1;
  }

  countApiRequest(): void {
    this.#stats.apiRequests += 1;
  }

  snapshot(): DemoStats {
    return structuredClone(this.#stats);
  }

  reset(): void {
    this.#stats = emptyStats();
  }
}

function emptyStats(): DemoStats {
  return {
    tokenRequests: { authorization_code: 0, refresh_token: 0 },
    revocations: 0,
    apiRequests: 0,
  };
}
