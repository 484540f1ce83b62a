/** The HTML of the hosted connect flow: pure functions from branding and state to documents. */
export { renderConnectPage, type ConnectPageOptions } from './connect.js';
export { renderErrorPage, type ErrorPageOptions } from './error.js';
export { CONTENT_SECURITY_POLICY } from './layout.js';
export { renderSuccessPage, type SuccessPageOptions } from './success.js';
export {
  DEFAULT_BRANDING,
  type AppInfo,
  type ConnectBranding,
  type RequestedScope,
} from './types.js';
