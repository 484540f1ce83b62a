import type { Caller } from '../../activities/db/api-keys.js';
import type { ConsoleContext } from '../console/context.js';

declare global {
  // Express's own extension point for what middleware hands to handlers.

  namespace Express {
    interface Locals {
      traceId: string;
      caller?: Caller;
      /** A signed-in person on a console page (api/console/console-access.ts). */
      console?: ConsoleContext;
    }
  }
}

export {};
