import { Router } from 'express';
import { z } from 'zod';
import {
  DEFAULT_THEME_RADIUS,
  getConnectSettings,
  saveConnectSettings,
  type ConnectSettings,
} from '../../activities/db/connect-settings.js';
import type { ApiDeps } from '../deps.js';
import { authorize, callerOf } from '../http/authorize.js';
import { parse } from '../http/validate.js';
import { registerManagementOperation } from '../openapi/registry.js';

// A refinement, not `.regex()`: the OpenAPI generator renders a `u`-flagged pattern wrongly.
const hasControl = (text: string) => /\p{Cc}/u.test(text);

/**
 * Only http(s): the connect pages drop any other scheme (`javascript:`, `data:`), so accepting
 * one here would store a setting that silently never shows.
 */
const pageUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
  .max(2048)
  .nullable()
  .default(null);

const themeMode = z.enum(['light', 'dark', 'system']);

/** PUT replaces the whole branding: what is left out is reset, never kept from before. */
export const updateConnectBrandingBody = z
  .strictObject({
    displayName: z
      .string()
      .min(1)
      .max(100)
      .refine((name) => !hasControl(name), 'must not contain control characters')
      // The pages would fall back to "Gatehouse" for a blank name: refused rather than ignored.
      .refine((name) => name.trim() !== '', 'must not be blank')
      .meta({
        description:
          'Your product name, shown on the connect pages; not blank, no control characters',
      }),
    accentColor: z
      .string()
      .regex(/^#[0-9a-f]{6}$/, 'must be "#" and six lowercase hex digits, e.g. #4f46e5')
      .meta({ description: 'Buttons and highlights; text on it stays readable whatever you pick' }),
    logoUrl: pageUrl.meta({ description: 'An http(s) URL; omitted or null: no logo' }),
    supportUrl: pageUrl.meta({ description: 'An http(s) URL; omitted or null: no support link' }),
    theme: z.strictObject({
      mode: themeMode.meta({ description: '`system` follows the browser' }),
      radius: z
        .number()
        .int()
        .min(0)
        .max(24)
        .default(DEFAULT_THEME_RADIUS)
        .meta({ description: 'Corner radius of buttons and boxes, in px (cards add 6 px)' }),
    }),
  })
  .meta({
    id: 'update_connect_branding_input',
    description:
      'Replaces the whole branding: omitted URLs are cleared, an omitted `theme.radius` is 10.',
  });

const connectSettingsOutput = z.object({
  displayName: z.string(),
  accentColor: z.string(),
  logoUrl: z.string().nullable(),
  supportUrl: z.string().nullable(),
  theme: z.object({ mode: themeMode, radius: z.number().int() }),
  updated_at: z.iso.datetime().nullable().meta({ description: 'null while the defaults apply' }),
  updated_by: z
    .string()
    .nullable()
    .meta({ description: 'agent id of the key that last changed it' }),
});

registerManagementOperation({
  method: 'get',
  path: '/v1/connect-settings',
  operationId: 'get_connect_settings',
  summary: 'Get the branding of the hosted pages',
  description: 'What the connect and approval pages show; the defaults until you set it.',
  scope: 'connect_settings:read',
  output: connectSettingsOutput.meta({ id: 'get_connect_settings_output' }),
});

registerManagementOperation({
  method: 'put',
  path: '/v1/connect-settings',
  operationId: 'update_connect_branding',
  summary: 'Replace the branding of the hosted pages',
  description: 'Open connect links show it on their next page view.',
  scope: 'connect_settings:manage',
  request: {
    body: {
      content: { 'application/json': { schema: updateConnectBrandingBody } },
      required: true,
    },
  },
  output: connectSettingsOutput.meta({ id: 'update_connect_branding_output' }),
});

function present(settings: ConnectSettings): z.infer<typeof connectSettingsOutput> {
  return {
    displayName: settings.displayName,
    accentColor: settings.accentColor,
    logoUrl: settings.logoUrl,
    supportUrl: settings.supportUrl,
    theme: {
      mode: settings.theme.mode,
      radius: settings.theme.radius ?? DEFAULT_THEME_RADIUS,
    },
    updated_at: settings.updatedAt?.toISOString() ?? null,
    updated_by: settings.updatedBy,
  };
}

/** The management operations get_connect_settings / update_connect_branding. */
export function connectSettingsRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get(
    '/v1/connect-settings',
    authorize({ operation: 'read', scope: 'connect_settings:read' }),
    async (_req, res) => {
      const settings = await getConnectSettings(deps.sql, callerOf(res).environmentId);
      res.json({ data: present(settings) });
    },
  );
  router.put(
    '/v1/connect-settings',
    authorize({ operation: 'write', scope: 'connect_settings:manage' }),
    async (req, res) => {
      const caller = callerOf(res);
      const body = parse(updateConnectBrandingBody, req.body, 'body');
      const saved = await saveConnectSettings(deps.sql, caller.environmentId, body, caller.agentId);
      res.json({ data: present(saved) });
    },
  );
  return router;
}
