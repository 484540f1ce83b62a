import type { Db } from '../../infra/database/client.js';

/**
 * Signatures of Slack requests already accepted, so a copy of one sent again within Slack's
 * five-minute window is refused (api/slack/request-signature.ts). A signature is kept until its
 * request's timestamp leaves the window (`keep_until`); after that Slack's own timestamp check
 * refuses the copy, and the row goes with the next claim.
 */

/**
 * Claims a signature: true when no request with it was accepted before. One statement: two API
 * processes given the same request at once cannot both claim it (the primary key decides).
 * Expired rows are deleted as a claim passes, against the caller's clock, the one the timestamp
 * check used.
 */
export async function claimSlackRequestSignature(
  sql: Db,
  signature: string,
  keepUntil: Date,
  now: Date,
): Promise<boolean> {
  const [row]: [{ claimed: boolean }?] = await sql`
    with expired as (
      delete from slack_request_signatures where keep_until < ${now}
    ), claimed as (
      insert into slack_request_signatures (signature, keep_until)
      values (${signature}, ${keepUntil})
      on conflict (signature) do nothing
      returning 1
    )
    select exists (select 1 from claimed) as claimed`;
  return row?.claimed === true;
}
