/** The HTML of the hosted approval page: pure functions from branding and approval to documents. */
export { renderDecidedPage, type DecidedPageOptions } from './decided.js';
export { REVIEW_REFERRER_POLICY } from './layout.js';
export { notPendingProblem, renderApprovalProblem, type ApprovalProblem } from './problems.js';
export { renderReviewPage, type ReviewPageOptions } from './review.js';
