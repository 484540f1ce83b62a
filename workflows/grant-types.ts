/**
 * Grants with an end: what a person approving a held call may add, and what a grant
 * is once made. Shared by the API, the call workflow and its activities.
 */
import type { CallScope } from './catalog/index.js';

/** Whom a grant covers: the held call's user, or any user. */
export type GrantFor = 'user' | 'any_user';

/** Asked for with an approval: allow the same action of the same agent for this long. */
export interface GrantRequest {
  for: GrantFor;
  /** At least 1, at most the governing policy's `approval.max_grant_seconds`. */
  seconds: number;
}

export type GrantStatus = 'active' | 'expired' | 'revoked';

/** A grant as the API shows it. */
export interface GrantView {
  id: string;
  agent_id: string;
  /** `<app>.<action>`, or `<app>.proxy`. */
  action: string;
  scope: CallScope;
  for: GrantFor;
  /** The user's external id; null for any user. */
  user: string | null;
  /** The approval that made it. */
  approval_id: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  status: GrantStatus;
  revoked_at: string | null;
  revoked_by: string | null;
}
