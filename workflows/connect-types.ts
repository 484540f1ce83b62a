/** Why a connect attempt ended without a connection; each maps to a branded error page. */
export type ConnectFailure =
  | 'invalid_state'
  | 'attempt_expired'
  | 'link_used'
  | 'link_expired'
  | 'app_not_configured'
  | 'exchange_failed';

export type ConnectOutcome =
  { ok: true; connectionId: string; linkId: string } | { ok: false; code: ConnectFailure };
