import type { ConnectFailure } from '../../workflows/connection-types.js';

/** What the user is told when a connect flow cannot go on; each failure is one branded page. */
export type FlowProblem =
  | ConnectFailure
  | 'link_invalid'
  | 'access_denied'
  | 'authorization_failed'
  | 'browser_mismatch'
  // A remote MCP server, or its authorization server, did not answer the start.
  | 'app_unavailable'
  // A remote MCP server's metadata names another party than the one it came from.
  | 'app_untrusted'
  // A credential form that did not come from the page this browser was shown.
  | 'form_invalid'
  | 'internal_error';

/**
 * Who the page points the user to. End users know the product that sent them the link, never
 * Gatehouse: `product` is its display name, or null when the environment has none, and the page
 * then speaks of "the app or website that sent you the link".
 */
export interface ProblemNames {
  product: string | null;
  appName: string;
}

interface ProblemText {
  status: number;
  title: string;
  message: (names: ProblemNames) => string;
  /** The way on goes through the product (a new link, its setup): its support link leads. */
  supportFirst?: true;
}

const SENDER = 'the app or website that sent you the link';
const sender = (product: string | null) => product ?? SENDER;
const supportOf = (product: string | null) =>
  product === null ? `the support of ${SENDER}` : `${product} support`;

export const FLOW_PROBLEMS: Record<FlowProblem, ProblemText> = {
  link_invalid: {
    status: 404,
    title: 'This link is not valid',
    message: ({ product }) =>
      `Check that you opened the whole link, or ask ${sender(product)} for a new one.`,
    supportFirst: true,
  },
  link_expired: {
    status: 410,
    title: 'This link has expired',
    message: ({ product }) =>
      `Connect links are valid for a limited time. Ask ${sender(product)} for a new link.`,
    supportFirst: true,
  },
  link_used: {
    status: 410,
    title: 'This link has already been used',
    message: ({ product }) =>
      `Each link works once. If you need to connect again, ask ${sender(product)} for a new link.`,
    supportFirst: true,
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
    message: ({ appName, product }) =>
      `You signed in to ${appName} with another account than the one connected before, so nothing was changed. Open your link again and sign in to ${appName} with the same account. To connect a different account, ask ${sender(product)} for a new link.`,
  },
  account_unverified: {
    status: 502,
    title: 'We could not confirm your account',
    message: ({ appName, product }) =>
      `${appName} did not say which account you signed in with, so nothing was saved. Open your connect link again; if it keeps failing, contact ${supportOf(product)}.`,
  },
  access_denied: {
    status: 403,
    title: 'Access was not granted',
    message: ({ appName, product }) =>
      `You declined access at ${appName}, so nothing was connected. To connect ${appName}${product === null ? '' : ` to ${product}`}, open your link again and choose Allow.`,
  },
  authorization_failed: {
    status: 502,
    title: 'The sign-in did not complete',
    message: ({ appName, product }) =>
      `${appName} reported an error. Open your connect link again; if it keeps failing, contact ${supportOf(product)}.`,
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
    message: ({ appName, product }) =>
      product === null
        ? `The app or website that sent you the link has not finished setting up ${appName}. Contact its support.`
        : `${product} has not finished setting up ${appName}. Contact their support.`,
    supportFirst: true,
  },
  app_unavailable: {
    status: 503,
    title: 'We could not reach the app',
    message: ({ appName, product }) =>
      `${appName} did not answer, so nothing was connected. Open your link again in a few minutes; if it keeps failing, contact ${supportOf(product)}.`,
  },
  app_untrusted: {
    status: 502,
    title: 'We could not verify where this app signs you in',
    message: ({ appName, product }) =>
      `${appName} sent you to a sign-in server that could not be verified, so nothing was sent to it and nothing was connected. Contact ${supportOf(product)}.`,
    supportFirst: true,
  },
  response_issuer_mismatch: {
    status: 502,
    title: 'We could not verify where you signed in',
    message: ({ appName, product }) =>
      `The answer to your sign-in did not come from the sign-in server ${appName} uses, so it was not used and nothing was connected. Open your connect link again; if it keeps failing, contact ${supportOf(product)}.`,
  },
  connection_revoked: {
    status: 410,
    title: 'This connection was removed',
    message: ({ product }) =>
      `The connection this link was meant to renew no longer exists. Ask ${sender(product)} for a new link.`,
    supportFirst: true,
  },
  form_invalid: {
    status: 403,
    title: 'This form cannot be sent from here',
    message: ({ appName }) =>
      `For your security, the form must be sent from the page your link opened, in the same browser, within a few minutes. Nothing was saved. To connect ${appName}, open your link again.`,
  },
  internal_error: {
    status: 500,
    title: 'Something went wrong',
    message: () => 'Nothing was saved. Please open your connect link again in a moment.',
  },
};
