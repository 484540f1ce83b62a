import type { CallAnswer } from '../../workflows/call-types.js';

/** A call's answer to one request; `replayed` when it is the answer kept under its key. */
export type GivenAnswer = CallAnswer & { replayed?: true };
