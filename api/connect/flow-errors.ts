import type { ConnectFailure } from '../../workflows/connection-types.js';

/** What the user is told when a connect flow cannot go on; each failure is one branded page. */
export type FlowProblem =
  | ConnectFailure
  | 'link_invalid'
  | 'access_denied'
  | 'authorization_failed'
  | 'browser_mismatch'
  | 'internal_error';

interface ProblemText {
  status: number;
  title: string;
  message: (names: { displayName: string; appName: string }) => string;
}

export const FLOW_PROBLEMS: Record<FlowProblem, ProblemText> = {
  link_invalid: {
    status: 404,
    title: 'This link is not valid',
    message: ({ displayName }) =>
      `Check that you opened the whole link, or ask ${displayName} for a new one.`,
  },
  link_expired: {
    status: 410,
    title: 'This link has expired',
    message: ({ displayName }) =>
      `Connect links are valid for a limited time. Ask ${displayName} for a new link.`,
  },
  link_used: {
    status: 410,
    title: 'This link has already been used',
    message: ({ displayName }) =>
      `Each link works once. If you need to connect again, ask ${displayName} for a new link.`,
  },
  invalid_state: {
    status: 400,
    title: 'This sign-in could not be verified',
    message: () =>
      'The response did not match a sign-in started here. Open your connect link again.',
  },
  attempt_expired: {
    status: 410,
    title: 'This sign-in took too long',
    message: () =>
      'For your security, sign-ins must be completed within a few minutes. Open your connect link again.',
  },
  browser_mismatch: {
    status: 403,
    title: 'This sign-in cannot be finished here',
    message: ({ appName }) =>
      `For your security, a sign-in must be finished in the browser that started it, and this browser did not. Nothing was connected. To connect ${appName}, start again from the link you were given.`,
  },
  account_mismatch: {
    status: 409,
    title: 'This is a different account',
    message: ({ appName, displayName }) =>
      `You signed in to ${appName} with another account than the one connected before, so nothing was changed. Open your link again and sign in to ${appName} with the same account. To connect a different account, ask ${displayName} for a new link.`,
  },
  account_unverified: {
    status: 502,
    title: 'We could not confirm your account',
    message: ({ appName }) =>
      `${appName} did not tell us which account you signed in with, so nothing was saved. Open your connect link again; if it keeps failing, contact support.`,
  },
  access_denied: {
    status: 403,
    title: 'Access was not granted',
    message: ({ appName, displayName }) =>
      `You declined access at ${appName}, so nothing was connected. To connect ${appName} to ${displayName}, open your link again and choose Allow.`,
  },
  authorization_failed: {
    status: 502,
    title: 'The sign-in did not complete',
    message: ({ appName }) =>
      `${appName} reported an error. Open your connect link again; if it keeps failing, contact support.`,
  },
  exchange_failed: {
    status: 502,
    title: 'We could not finish connecting',
    message: ({ appName }) =>
      `${appName} did not accept the sign-in. Nothing was saved. Open your connect link again.`,
  },
  app_not_configured: {
    status: 409,
    title: 'This app is not available yet',
    message: ({ appName, displayName }) =>
      `${displayName} has not finished setting up ${appName}. Contact their support.`,
  },
  connection_revoked: {
    status: 410,
    title: 'This connection was removed',
    message: ({ displayName }) =>
      `The connection this link was meant to renew no longer exists. Ask ${displayName} for a new link.`,
  },
  internal_error: {
    status: 500,
    title: 'Something went wrong',
    message: () => 'Nothing was saved. Please open your connect link again in a moment.',
  },
};
