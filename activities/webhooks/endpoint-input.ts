import { z } from 'zod';
import {
  isStrongWebhookSecret,
  WEBHOOK_SECRET_PATTERN,
  WEBHOOK_SECRET_RULE,
} from './signing-secret.js';

/** What the API and the CLI accept as an endpoint; the address rule is checked apart, as it
 * needs DNS (see `endpointAddressProblem`). */
export const webhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .refine(
    (url) => {
      if (!URL.canParse(url)) return true; // reported by the URL check already
      const parsed = new URL(url);
      return !parsed.username && !parsed.password;
    },
    { message: 'must not carry credentials; the signature authenticates each delivery' },
  );

export const webhookSecret = z
  .string()
  .regex(WEBHOOK_SECRET_PATTERN, { message: WEBHOOK_SECRET_RULE, abort: true })
  .refine(isStrongWebhookSecret, WEBHOOK_SECRET_RULE);

export const webhookEndpointInput = z.strictObject({
  url: webhookUrl,
  secret: webhookSecret,
  audit_events: z.boolean().default(false).meta({
    description:
      'Also deliver every audit event, in batches of up to 100 as `audit.event`, from the moment it is turned on (README "Webhooks").',
  }),
});
