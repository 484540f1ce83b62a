import type { ActivityDeps } from '../deps.js';
import { cancelNexusCallActivity } from './cancel-nexus-call.js';
import { runNexusCallActivity } from './run-nexus-call.js';

/** The activities of the workflow behind `gatehouse.runAction` (workflows/nexus/run-action.ts). */
export function nexusActivities(deps: ActivityDeps) {
  return {
    runNexusCall: runNexusCallActivity(deps),
    cancelNexusCall: cancelNexusCallActivity(deps),
  };
}
