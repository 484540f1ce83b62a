import type { ActivityDeps } from '../deps.js';
import { awaitApprovalDecisionActivity } from './await-approval.js';
import { cancelNexusCallActivity } from './cancel-nexus-call.js';
import { runNexusCallActivity } from './run-nexus-call.js';

/** The activities of the workflow behind `gatehouse.runAction` (workflows/nexus/run-action.ts). */
export function nexusActivities(deps: ActivityDeps) {
  return {
    runNexusCall: runNexusCallActivity(deps),
    awaitApprovalDecision: awaitApprovalDecisionActivity(deps),
    cancelNexusCall: cancelNexusCallActivity(deps),
  };
}
