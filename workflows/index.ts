// The workflows the worker registers. Each file tells one durable story.
export { healthCheck } from './health-check.js';
