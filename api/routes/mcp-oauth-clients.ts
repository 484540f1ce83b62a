import { Router } from 'express';
import { z } from 'zod';
import {
  getMcpClientBranding,
  saveMcpClientBranding,
  type McpClientBranding,
} from '../../activities/db/mcp-client-branding.js';
import {
  createMcpOAuthClient,
  listMcpOAuthClients,
  MCP_AUTH_METHODS,
  retireMcpOAuthClient,
  rotateMcpOAuthClient,
  SECRET_HINT_MIN_LENGTH,
  selectMcpOAuthClient,
  type McpOAuthClient,
  type McpOAuthClientChange,
} from '../../activities/db/mcp-oauth-clients.js';
import type { ApiDeps } from '../deps.js';
import { environmentApp, knownAppIds } from '../catalog-app.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { uuidString } from '../http/ids.js';
import { authorize, callerOf } from '../http/authorize.js';
import { expectNoBody, parse } from '../http/validate.js';
import { registerManagementOperation, type ErrorExample } from '../openapi/registry.js';
import { iso, optionalTimestamp, timestamp } from '../presenters/timestamps.js';

// ---- Inputs: request bodies and their length limits ----

/** The length limits count characters, as JSON Schema's length keywords do: code points, not the
 * UTF-16 units of `String#length`, so an emoji counts once. */
function characterCount(value: string): number {
  return value.length - (value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

/**
 * A string of `min` to `max` characters, all of them matching `allowed` when given. A lone
 * surrogate is no character at all and would reach Postgres as U+FFFD, silently changing the
 * value: refused everywhere.
 */
function text(options: { min: number; max: number; allowed?: { pattern: RegExp; rule: string } }) {
  const { min, max, allowed } = options;
  const counted = z
    .string()
    .refine((value) => characterCount(value) >= min, {
      message: `must be at least ${min} character${min === 1 ? '' : 's'} long`,
    })
    .refine((value) => characterCount(value) <= max, {
      message: `must be at most ${max} characters long`,
    });
  // A refinement rather than `.regex()`: the OpenAPI generator mangles a pattern's flags, and
  // `\p{…}` needs the `u` flag. JSON Schema patterns are Unicode-aware anyway.
  return (
    allowed
      ? counted.refine((value) => allowed.pattern.test(value), { message: allowed.rule })
      : counted
  )
    .refine((value) => !/\p{Cs}/u.test(value), { message: 'must not contain lone surrogates' })
    .meta({
      minLength: min,
      maxLength: max,
      ...(allowed ? { pattern: allowed.pattern.source } : {}),
    });
}

const singleLine = (max: number) =>
  text({
    min: 1,
    max,
    // NUL is named on purpose: it is one of the characters refused.
    // eslint-disable-next-line no-control-regex
    allowed: { pattern: /^[^\r\n\u0000]*$/u, rule: 'must not contain CR, LF or NUL' },
  });

const clientSecret = singleLine(4096).meta({
  writeOnly: true,
  description: 'Write-only: sealed at rest and never returned.',
});

const mcpOAuthClientPath = z.strictObject({ id: uuidString() });

export const createMcpOAuthClientBody = z
  .strictObject({
    // The length limit first, then the catalog (in the route): a caller learns both rules.
    app: text({ min: 1, max: 100 }).meta({
      description: `A catalog app (${knownAppIds().join(', ')}) or a remote MCP app of the environment`,
    }),
    client: z
      .strictObject({
        issuer: singleLine(4096),
        clientId: singleLine(4096),
        clientSecret: clientSecret.optional(),
        authMethod: z.enum(MCP_AUTH_METHODS),
        source: z.literal('byo'),
      })
      // A confidential method without a secret could never authenticate, and a secret on a public
      // client would be stored for nothing: both are refused rather than guessed at.
      .superRefine((client, ctx) => {
        if (client.authMethod === 'none' && client.clientSecret !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['clientSecret'],
            message: 'must be absent when authMethod is "none"',
          });
        }
        if (client.authMethod !== 'none' && client.clientSecret === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['clientSecret'],
            message: `is required when authMethod is "${client.authMethod}"`,
          });
        }
      })
      .meta({
        description:
          '`clientSecret` is required with the `client_secret_*` methods and refused with `none`.',
      }),
  })
  .meta({ id: 'create_mcp_oauth_client_input' });

export const rotateMcpOAuthClientBody = z
  .strictObject({ clientSecret, clientId: singleLine(4096).optional() })
  .meta({ id: 'rotate_mcp_oauth_client_input' });

const uri = singleLine(4096);

export const updateMcpClientBrandingBody = z
  .strictObject({
    client_name: text({
      min: 1,
      max: 100,
      allowed: {
        pattern: /^[^\p{Cc}\p{Cf}<>]*$/u,
        rule: 'must not contain control characters, format characters, "<" or ">"',
      },
    }),
    logo_uri: uri.optional(),
    client_uri: uri.optional(),
    policy_uri: uri.optional(),
    tos_uri: uri.optional(),
  })
  .meta({
    id: 'update_mcp_client_branding_input',
    description: 'Replaces the branding: a URI left out is cleared.',
  });

// ---- Outputs ----

const mcpOAuthClientSchema = z
  .object({
    id: z.uuid(),
    app: z.string(),
    issuer: z.string(),
    clientId: z.string(),
    authMethod: z.enum(MCP_AUTH_METHODS),
    source: z.literal('byo'),
    status: z.enum(['active', 'retired']),
    selected: z.boolean().meta({ description: "Whether this is its app's selected client" }),
    clientSecretHint: z
      .string()
      .nullable()
      .meta({
        description: `The last four characters of the secret; null when there is none or it is shorter than ${SECRET_HINT_MIN_LENGTH} characters.`,
      }),
    created_at: timestamp,
    updated_at: timestamp,
    rotated_at: optionalTimestamp,
    retired_at: optionalTimestamp,
  })
  .meta({ id: 'McpOAuthClient' });

// No component id of its own: the generator would make that shared component nullable, because
// the settings output embeds it as nullable.
const mcpClientBrandingSchema = z.object({
  client_name: z.string(),
  logo_uri: z.string().nullable(),
  client_uri: z.string().nullable(),
  policy_uri: z.string().nullable(),
  tos_uri: z.string().nullable(),
  updated_at: timestamp,
  updated_by: z.string().meta({ description: 'agent id of the key that last set it' }),
});

const settingsOutput = z.object({
  apps: z.array(
    z.object({
      app: z.string(),
      selected_client_id: z.uuid().nullable(),
      clients: z.array(mcpOAuthClientSchema).meta({ description: 'Oldest first' }),
    }),
  ),
  branding: mcpClientBrandingSchema
    .nullable()
    .meta({ description: 'null until first set with update_mcp_client_branding' }),
});

const unknownClient: ErrorExample = {
  when: 'unknown client',
  error: new NotFoundError('MCP OAuth client'),
};
const retiredClient: ErrorExample = {
  when: 'retired',
  error: new ConflictError('The MCP OAuth client is retired; register a new one instead.'),
};
const duplicateClient: ErrorExample = {
  when: 'same issuer and clientId',
  error: new ConflictError(
    'The app already has an active client with this issuer and clientId; rotate that one instead.',
  ),
};

registerManagementOperation({
  method: 'get',
  path: '/v1/mcp-oauth-clients',
  operationId: 'get_mcp_oauth_settings',
  summary: 'Get the MCP OAuth clients and the client branding',
  description: 'The clients of each app, which one is selected, and the branding they present.',
  scope: 'auth_configs:read',
  output: settingsOutput.meta({ id: 'get_mcp_oauth_settings_output' }),
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-oauth-clients',
  operationId: 'create_mcp_oauth_client',
  summary: 'Register an MCP OAuth client for an app',
  description:
    'It starts active but not selected: select it to put it in use. The secret is write-only: stored sealed and never returned.',
  errorExamples: [duplicateClient],
  scope: 'auth_configs:manage',
  request: {
    body: {
      content: { 'application/json': { schema: createMcpOAuthClientBody } },
      required: true,
    },
  },
  output: mcpOAuthClientSchema.meta({ id: 'create_mcp_oauth_client_output' }),
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-oauth-clients/{id}/rotate',
  operationId: 'rotate_mcp_oauth_client',
  summary: 'Rotate the secret of a client',
  description:
    'Replaces the secret, and the client id when given, of an active client that has a secret (not `authMethod: none`).',
  errorExamples: [
    unknownClient,
    retiredClient,
    duplicateClient,
    {
      when: 'no secret to rotate',
      error: new ConflictError(
        'The MCP OAuth client uses authMethod "none" and has no secret to rotate; register a new client instead.',
      ),
    },
  ],
  scope: 'auth_configs:manage',
  request: {
    params: mcpOAuthClientPath,
    body: {
      content: { 'application/json': { schema: rotateMcpOAuthClientBody } },
      required: true,
    },
  },
  output: mcpOAuthClientSchema.meta({ id: 'rotate_mcp_oauth_client_output' }),
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-oauth-clients/{id}/retire',
  operationId: 'retire_mcp_oauth_client',
  summary: 'Retire a client for good',
  description: 'It is unselected and its secret erased; a retired client cannot come back.',
  errorExamples: [unknownClient, retiredClient],
  scope: 'auth_configs:manage',
  request: { params: mcpOAuthClientPath },
  output: mcpOAuthClientSchema.meta({ id: 'retire_mcp_oauth_client_output' }),
});
registerManagementOperation({
  method: 'post',
  path: '/v1/mcp-oauth-clients/{id}/select',
  operationId: 'select_mcp_oauth_client',
  summary: 'Select a client as the one its app uses',
  description: 'The app’s previously selected client is unselected in the same step.',
  errorExamples: [unknownClient, retiredClient],
  scope: 'auth_configs:manage',
  request: { params: mcpOAuthClientPath },
  output: mcpOAuthClientSchema.meta({ id: 'select_mcp_oauth_client_output' }),
});
registerManagementOperation({
  method: 'put',
  path: '/v1/mcp-client-branding',
  operationId: 'update_mcp_client_branding',
  summary: 'Set the MCP client branding',
  description:
    'The name and links the MCP OAuth clients present to authorization servers. Replaces the branding: a URI left out is cleared.',
  scope: 'auth_configs:manage',
  request: {
    body: {
      content: { 'application/json': { schema: updateMcpClientBrandingBody } },
      required: true,
    },
  },
  output: mcpClientBrandingSchema.meta({ id: 'update_mcp_client_branding_output' }),
});

// ---- Presenters ----

function presentClient(client: McpOAuthClient): z.infer<typeof mcpOAuthClientSchema> {
  return {
    id: client.id,
    app: client.app,
    issuer: client.issuer,
    clientId: client.clientId,
    authMethod: client.authMethod,
    source: client.source,
    status: client.status,
    selected: client.selected,
    clientSecretHint: client.clientSecretHint,
    created_at: iso(client.createdAt),
    updated_at: iso(client.updatedAt),
    rotated_at: iso(client.rotatedAt),
    retired_at: iso(client.retiredAt),
  };
}

function presentBranding(branding: McpClientBranding): z.infer<typeof mcpClientBrandingSchema> {
  return {
    client_name: branding.clientName,
    logo_uri: branding.logoUri,
    client_uri: branding.clientUri,
    policy_uri: branding.policyUri,
    tos_uri: branding.tosUri,
    updated_at: iso(branding.updatedAt),
    updated_by: branding.updatedBy,
  };
}

function presentSettings(
  clients: McpOAuthClient[],
  branding: McpClientBranding | null,
): z.infer<typeof settingsOutput> {
  const apps = new Map<string, z.infer<typeof settingsOutput>['apps'][number]>();
  for (const client of clients) {
    const entry = apps.get(client.app) ?? {
      app: client.app,
      selected_client_id: null,
      clients: [],
    };
    entry.clients.push(presentClient(client));
    if (client.selected) entry.selected_client_id = client.id;
    apps.set(client.app, entry);
  }
  return { apps: [...apps.values()], branding: branding ? presentBranding(branding) : null };
}

/** The answer to a change, or the error that explains why it was refused. */
function changed(change: McpOAuthClientChange): { data: z.infer<typeof mcpOAuthClientSchema> } {
  if (change.ok) return { data: presentClient(change.client) };
  switch (change.reason) {
    case 'not_found':
      throw new NotFoundError('MCP OAuth client');
    case 'retired':
      throw new ConflictError('The MCP OAuth client is retired; register a new one instead.');
    case 'public':
      throw new ConflictError(
        'The MCP OAuth client uses authMethod "none" and has no secret to rotate; register a new client instead.',
      );
    case 'duplicate':
      throw new ConflictError(
        'The app already has an active client with this issuer and clientId; rotate that one instead.',
      );
  }
}

/**
 * MCP OAuth clients and their branding, per environment. A client of another environment is
 * reported as not found, never as forbidden.
 */
export function mcpOAuthClientRoutes(deps: ApiDeps): Router {
  const router = Router();
  const keyring = deps.config.encryption;
  const manage = authorize({ operation: 'write', scope: 'auth_configs:manage' });

  router.get(
    '/v1/mcp-oauth-clients',
    authorize({ operation: 'read', scope: 'auth_configs:read' }),
    async (_req, res) => {
      const environmentId = callerOf(res).environmentId;
      const [clients, branding] = await Promise.all([
        listMcpOAuthClients(deps.sql, environmentId),
        getMcpClientBranding(deps.sql, environmentId),
      ]);
      res.json({ data: presentSettings(clients, branding) });
    },
  );

  router.post('/v1/mcp-oauth-clients', manage, async (req, res) => {
    const body = parse(createMcpOAuthClientBody, req.body, 'body');
    const environmentId = callerOf(res).environmentId;
    const app = await environmentApp(deps.sql, environmentId, body.app);
    const change = await createMcpOAuthClient(deps.sql, keyring, {
      environmentId,
      app,
      ...body.client,
    });
    res.json(changed(change));
  });

  router.post('/v1/mcp-oauth-clients/:id/rotate', manage, async (req, res) => {
    const { id } = parse(mcpOAuthClientPath, req.params, 'path');
    const body = parse(rotateMcpOAuthClientBody, req.body, 'body');
    res.json(
      changed(await rotateMcpOAuthClient(deps.sql, keyring, callerOf(res).environmentId, id, body)),
    );
  });

  router.post('/v1/mcp-oauth-clients/:id/retire', manage, async (req, res) => {
    const { id } = parse(mcpOAuthClientPath, req.params, 'path');
    expectNoBody(req);
    res.json(changed(await retireMcpOAuthClient(deps.sql, callerOf(res).environmentId, id)));
  });

  router.post('/v1/mcp-oauth-clients/:id/select', manage, async (req, res) => {
    const { id } = parse(mcpOAuthClientPath, req.params, 'path');
    expectNoBody(req);
    res.json(changed(await selectMcpOAuthClient(deps.sql, callerOf(res).environmentId, id)));
  });

  router.put('/v1/mcp-client-branding', manage, async (req, res) => {
    const caller = callerOf(res);
    const body = parse(updateMcpClientBrandingBody, req.body, 'body');
    const branding = await saveMcpClientBranding(
      deps.sql,
      caller.environmentId,
      {
        clientName: body.client_name,
        logoUri: body.logo_uri ?? null,
        clientUri: body.client_uri ?? null,
        policyUri: body.policy_uri ?? null,
        tosUri: body.tos_uri ?? null,
      },
      caller.agentId,
    );
    res.json({ data: presentBranding(branding) });
  });

  return router;
}
