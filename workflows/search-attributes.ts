import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * What an operator filters calls by in the Temporal UI. Never a secret or a call
 * input: search attributes are stored and shown unencrypted.
 */
export const searchAttributes = {
  environment: defineSearchAttributeKey('GatehouseEnvironment', SearchAttributeType.KEYWORD),
  agent: defineSearchAttributeKey('GatehouseAgent', SearchAttributeType.KEYWORD),
  user: defineSearchAttributeKey('GatehouseUser', SearchAttributeType.KEYWORD),
  action: defineSearchAttributeKey('GatehouseAction', SearchAttributeType.KEYWORD),
  decision: defineSearchAttributeKey('GatehouseDecision', SearchAttributeType.KEYWORD),
  approvalId: defineSearchAttributeKey('GatehouseApprovalId', SearchAttributeType.KEYWORD),
} as const;
