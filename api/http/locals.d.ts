import type { Caller } from '../../activities/db/api-keys.js';

declare global {
  // Express's own extension point for what middleware hands to handlers.

  namespace Express {
    interface Locals {
      traceId: string;
      caller?: Caller;
    }
  }
}

export {};
