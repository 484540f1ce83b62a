import { z } from 'zod';

/**
 * One decision on an approval as the API shows it: in the approval's `decisions`, and in the
 * approval an audit event names.
 */
export const decisionSchema = z
  .object({
    by: z.string().meta({
      description:
        "Who decided: a key's agent id, `person:<email>`, or `<addressee> (decision link)` for someone holding a decision link",
      example: 'person:alice@example.com',
    }),
    decision: z.enum(['approve', 'reject']),
    at: z.iso.datetime(),
    via: z.enum(['api', 'console', 'link', 'slack']).meta({
      description:
        "`api` (an API key), `console` (a person signed in), `link` (a decision link), `slack` (a person pressing a button of the approval's Slack message)",
    }),
    name: z.string().optional().meta({ description: "A person's name" }),
    issuer: z
      .string()
      .optional()
      .meta({ description: "A person's identity provider (the ID token's `iss`)" }),
    subject: z
      .string()
      .optional()
      .meta({ description: "A person's id at the identity provider (the ID token's `sub`)" }),
  })
  .meta({ id: 'ApprovalDecision', description: 'One decision, as it was recorded' });
