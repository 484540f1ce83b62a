/**
 * The benchmark's yardstick: the least a call through Temporal can cost. The caller
 * reaches it exactly as the API reaches a call, by update-with-start, and the Update is answered
 * at once, so what `npm run bench` measures here is the engine's own round trip on this machine
 * with the project's server flags, worker options and client. Nothing in the service starts it.
 */
import { allHandlersFinished, condition, defineUpdate, setHandler } from '@temporalio/workflow';

export const ENGINE_FLOOR_WORKFLOW = 'engineFloor';

/** Echoes its argument, so the payload passes the codec both ways as a call's does. */
export const floorUpdate = defineUpdate<string, [string]>('floor');

export async function engineFloor(): Promise<void> {
  let answered = false;
  setHandler(floorUpdate, (payload) => {
    answered = true;
    return payload;
  });
  await condition(() => answered);
  await condition(allHandlersFinished);
}
