/**
 * The `gatehouse` Nexus service: the contract a backend's own Temporal workflow
 * calls through a Nexus endpoint, shared by Gatehouse's handler and by callers. Types only, plus
 * the service definition, so a caller's workflow bundle can import it.
 */
import * as nexus from 'nexus-rpc';

/** One governed action run, as `POST /v1/actions/{action}/run` takes it. */
export interface RunActionInput {
  /** `<app>.<action>`, e.g. `acme.create_task`. */
  action: string;
  /** The end user's external id. */
  user: string;
  /** The action's input; see `GET /v1/actions/{action}`. Default `{}`. */
  input?: Record<string, unknown>;
  /**
   * Names the logical call, as REST's `Idempotency-Key`. Default: the Nexus operation's request
   * id, so each operation is one call whatever retries Temporal makes on the way.
   */
  idempotency_key?: string;
}

/** The app's answer, as REST answers an action run (`ActionResult`). */
export interface RunActionResult {
  /** false when the app answered with a failure of its own. */
  ok: boolean;
  data: unknown;
  /** The app's status when `ok` is false. */
  upstream_status?: number;
}

export const gatehouseService = nexus.service('gatehouse', {
  runAction: nexus.operation<RunActionInput, RunActionResult>(),
});
